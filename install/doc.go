// Package install writes gotrain's Jupyter kernelspec: kernel.json, which
// tells Jupyter how to start the kernel, and the logos front ends show.
//
// A kernelspec is a folder named after the kernel inside a kernels folder
// that Jupyter searches (see the jupyter_client documentation, "Kernel
// specs"). Dir resolves the usual destinations: the user's data folder, a
// prefix such as /usr/local, or Debian Python's sys.prefix.
//
// The folder also holds setup.sh, the script the README's commands run to
// install everything gotrain needs on a fresh Debian machine, and build.sh,
// which builds gotrain on Go's runtime patched for many plugins
// (goruntime.sh) where the Go version is one the patch was checked on
// (goruntime/VERSIONS). The tests here check that version gate, and that
// plugins built on the patched runtime see the same type identities as on
// Go's own (testdata/identity).
package install
