package main

import (
	"fmt"
	"os"
	"strings"
	"text/template"
)

type Item struct {
	Name  string
	Price float64
	Qty   int
}

func (i Item) Total() float64 { return i.Price * float64(i.Qty) }

type Invoice struct {
	Customer string
	Items    []Item
	note     string
}

func (inv Invoice) Sum() float64 {
	s := 0.0
	for _, i := range inv.Items {
		s += i.Total()
	}
	return s
}

func main() {
	tmpl := template.Must(template.New("inv").Funcs(template.FuncMap{"upper": strings.ToUpper}).Parse(
		`Invoice for {{.Customer | upper}}
{{range $i, $it := .Items}}{{$i}}. {{printf "%-8s" $it.Name}} {{$it.Qty}} x {{printf "%.2f" $it.Price}} = {{printf "%6.2f" $it.Total}}
{{else}}no items
{{end}}Total: {{printf "%.2f" .Sum}}{{if gt (len .Items) 2}} (bulk){{end}}
`))
	tmpl.Execute(os.Stdout, Invoice{Customer: "acme", Items: []Item{{"bolts", 0.25, 40}, {"nuts", 0.1, 40}, {"gear", 12.5, 1}}})
	tmpl.Execute(os.Stdout, Invoice{Customer: "nobody"})
	err := template.Must(template.New("x").Parse("{{.note}}\n")).Execute(os.Stdout, Invoice{note: "hidden"})
	fmt.Fprintln(os.Stdout, err)
}
