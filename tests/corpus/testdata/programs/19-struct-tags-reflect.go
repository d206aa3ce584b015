package main

import (
	"fmt"
	"reflect"
	"strings"
)

type config struct {
	Host    string `env:"HOST" default:"localhost"`
	Port    int    `env:"PORT" default:"8080"`
	Debug   bool   `env:"DEBUG"`
	secret  string
	Retries []int
}

func (c config) Addr() string { return fmt.Sprintf("%s:%d", c.Host, c.Port) }

func main() {
	t := reflect.TypeOf(config{})
	fmt.Println(t.Name(), t.Kind(), t.NumField(), t.NumMethod())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		fmt.Printf("%-8s %-6s exported=%-5v env=%q default=%q\n", f.Name, f.Type, f.IsExported(), f.Tag.Get("env"), f.Tag.Get("default"))
	}
	c := config{Host: "example.org", Port: 443, secret: "x"}
	v := reflect.ValueOf(&c).Elem()
	v.FieldByName("Port").SetInt(8443)
	v.Field(2).SetBool(true)
	fmt.Println(c.Addr(), c.Debug, v.Field(3).CanSet(), v.NumField())
	m := reflect.ValueOf(c).MethodByName("Addr")
	fmt.Println(m.Call(nil)[0], strings.ToUpper(t.Method(0).Name))
	fmt.Println(reflect.DeepEqual(c, config{Host: "example.org", Port: 8443, Debug: true, secret: "x"}))
}
