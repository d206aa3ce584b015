// Package install holds no code of its own: its folder is the set-up of a
// machine, and this package is where that set-up is tested.
//
// setup.sh installs everything gotrain needs on a fresh Debian machine (the
// README's commands run it); build.sh builds gotrain on Go's runtime
// patched for many plugins (goruntime.sh) where the Go version is one the
// patch was checked on (goruntime/VERSIONS). The tests here check that
// version gate, and that plugins built on the patched runtime see the same
// type identities as on Go's own (testdata/identity); installtest says which
// runtime a binary links. The kernelspec itself is package kernelspec.
package install
