package main

import (
	"fmt"
	"strings"
)

type money struct {
	cents    int64
	currency string
}

func (m money) Format(f fmt.State, verb rune) {
	whole, frac := m.cents/100, m.cents%100
	if frac < 0 {
		frac = -frac
	}
	switch verb {
	case 'v':
		if f.Flag('+') {
			fmt.Fprintf(f, "money{cents:%d currency:%s}", m.cents, m.currency)
			return
		}
		fallthrough
	case 's':
		s := fmt.Sprintf("%d.%02d %s", whole, frac, m.currency)
		if w, ok := f.Width(); ok && len(s) < w {
			pad := strings.Repeat(" ", w-len(s))
			if f.Flag('-') {
				s += pad
			} else {
				s = pad + s
			}
		}
		fmt.Fprint(f, s)
	case 'd':
		fmt.Fprintf(f, "%d", m.cents)
	default:
		fmt.Fprintf(f, "%%!%c(money)", verb)
	}
}

func main() {
	prices := []money{{1999, "EUR"}, {5, "USD"}, {-250, "GBP"}}
	for _, p := range prices {
		fmt.Printf("[%v] [%+v] [%12s] [%-12s] [%d] [%x]\n", p, p, p, p, p, p)
	}
	fmt.Println(prices[0], fmt.Sprint(prices[1]), prices)
}
