module github.com/gotrain/gotrain

go 1.26.8

require (
	github.com/go-zeromq/zmq4 v0.17.0
	go.uber.org/goleak v1.3.0
	golang.org/x/tools v0.52.0
	gonum.org/v1/gonum v0.17.0
)

require (
	github.com/go-zeromq/goczmq/v4 v4.2.2 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.23.0 // indirect
)

replace github.com/go-zeromq/zmq4 => ./third_party/zmq4
