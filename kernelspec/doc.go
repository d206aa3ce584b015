// Package kernelspec writes gotrain's Jupyter kernelspec: kernel.json, which
// tells Jupyter how to start the kernel, and the logos front ends show.
//
// A kernelspec is a folder named after the kernel inside a kernels folder
// that Jupyter searches (see the jupyter_client documentation, "Kernel
// specs"). Dir resolves the usual destinations: the user's data folder, a
// prefix such as /usr/local, or Debian Python's sys.prefix. `gotrain
// install` is its command.
package kernelspec
