package main

import (
	"fmt"
	"math"
)

type point struct{ x, y float64 }

func (p point) dist(q point) float64 { return math.Hypot(p.x-q.x, p.y-q.y) }

type cluster struct {
	center  point
	members []point
}

func assign(points []point, clusters []cluster) {
	for i := range clusters {
		clusters[i].members = clusters[i].members[:0]
	}
	for _, p := range points {
		best := 0
		for i, c := range clusters {
			if p.dist(c.center) < p.dist(clusters[best].center) {
				best = i
			}
		}
		clusters[best].members = append(clusters[best].members, p)
	}
}

func update(clusters []cluster) (moved float64) {
	for i, c := range clusters {
		var sx, sy float64
		for _, m := range c.members {
			sx += m.x
			sy += m.y
		}
		n := float64(len(c.members))
		next := point{sx / n, sy / n}
		moved += next.dist(c.center)
		clusters[i].center = next
	}
	return moved
}

func main() {
	points := []point{{1, 1}, {1.5, 2}, {3, 4}, {5, 7}, {3.5, 5}, {4.5, 5}, {3.5, 4.5}, {9, 9}, {8.5, 9.5}, {9.5, 8}}
	clusters := []cluster{{center: points[0]}, {center: points[3]}, {center: points[7]}}
	for iter := 1; iter <= 10; iter++ {
		assign(points, clusters)
		moved := update(clusters)
		fmt.Printf("iteration %d moved %.4f\n", iter, moved)
		if moved < 1e-9 {
			break
		}
	}
	for i, c := range clusters {
		fmt.Printf("cluster %d center (%.3f, %.3f) size %d\n", i, c.center.x, c.center.y, len(c.members))
	}
}
