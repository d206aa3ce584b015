package worker

import (
	"bufio"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// mpiSpec is what `%workers -np N [--hostfile FILE] [--host LIST]
// [--address ADDR]` asks for: N workers that mpirun starts, on the hosts
// it is given (this machine by default).
type mpiSpec struct {
	np       int
	hostfile string
	hosts    string
	address  string
}

// parseMPISpec parses the arguments of %workers -np.
func parseMPISpec(arg string) (mpiSpec, error) {
	var s mpiSpec
	fs := flag.NewFlagSet("%workers", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&s.np, "np", 0, "")
	fs.IntVar(&s.np, "n", 0, "")
	fs.StringVar(&s.hostfile, "hostfile", "", "")
	fs.StringVar(&s.hosts, "host", "", "")
	fs.StringVar(&s.address, "address", "", "")
	usage := "want %workers -np N [--hostfile FILE] [--host HOST,…] [--address ADDR]"
	if err := fs.Parse(strings.Fields(arg)); err != nil {
		return s, fmt.Errorf("%%workers %s: %v; %s", arg, err, usage)
	}
	if fs.NArg() > 0 {
		return s, fmt.Errorf("%%workers %s: unexpected %q; %s", arg, fs.Arg(0), usage)
	}
	if s.np < 1 {
		return s, fmt.Errorf("%%workers %s: -np: want N ≥ 1, got %d; %s", arg, s.np, usage)
	}
	return s, nil
}

func (s mpiSpec) String() string {
	switch {
	case s.hostfile != "":
		return "the hosts of " + s.hostfile
	case s.hosts != "":
		return "hosts " + s.hosts
	}
	return "this machine"
}

// mpiJob is one mpirun and the workers it started. mpirun starts every
// rank (`gotrain worker` with GOTRAIN_CLUSTER=mpi), each of which connects
// back to the job's listener over TLS, proves it holds the job's
// credential (auth.go) for its rank, and is served by the attached Client
// of that rank. The kernel is never an MPI
// rank: mpirun ends the whole job when a rank dies, and the kernel only
// sees its children go.
type mpiJob struct {
	spec    mpiSpec
	cmd     *exec.Cmd
	ln      net.Listener
	tls     *tls.Config // the listener's, with a certificate made for the job
	cred    credential  // every rank's; cred.cert pins tls's certificate
	clients []*Client
	own     tail          // mpirun's own lines, untagged
	done    chan struct{} // closed when mpirun was reaped; why is set
	why     string

	mu      sync.Mutex
	culprit int // the rank mpirun said ended the job, or -1
}

// forwardEnv names the variables each rank gets from the kernel's
// environment, where set: mpirun passes a remote host's ranks only what it
// is told to (-x).
var forwardEnv = []string{"PATH", "HOME", "GOPATH", "GOMODCACHE", "GOCACHE", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOPRIVATE", "GOTOOLCHAIN", "LD_LIBRARY_PATH"}

// checkMPI returns mpirun's path, or an error when spec cannot start: it
// is checked before the running workers stop, so a typo costs nothing.
func (g *Group) checkMPI(spec mpiSpec) (string, error) {
	if g.cfg.NoMPI != "" {
		return "", fmt.Errorf("%%workers -np: %s", g.cfg.NoMPI)
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		return "", fmt.Errorf("%%workers -np: mpirun is not on the kernel's PATH (%v): install OpenMPI (Debian: openmpi-bin)", err)
	}
	if spec.hostfile != "" {
		if _, err := os.Stat(spec.hostfile); err != nil {
			return "", fmt.Errorf("%%workers --hostfile: %w", err)
		}
	}
	return mpirun, nil
}

// startMPILocked starts spec.np workers under mpirun.
func (g *Group) startMPILocked(spec mpiSpec) error {
	mpirun, err := g.checkMPI(spec)
	if err != nil {
		return err
	}
	listen, offer, err := spec.addresses()
	if err != nil {
		return err
	}
	cert, sum, err := linkCert()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(listen, "0"))
	if err != nil {
		return fmt.Errorf("%%workers -np: listening for the workers on %s: %w", listen, err)
	}
	job := &mpiJob{spec: spec, ln: ln, tls: serverTLS(cert), cred: newCredential(sum), done: make(chan struct{}), culprit: -1}
	job.own.log = g.cfg.Logger
	for range spec.np {
		cfg := g.cfg
		cfg.Attach, cfg.NoRestart = true, true
		c, err := NewClient(cfg)
		if err != nil {
			ln.Close()
			closeAll(job.clients)
			return err
		}
		job.clients = append(job.clients, c)
	}

	env := append(append(os.Environ(), g.cfg.Env...), ClusterEnv+"=mpi", TokenEnv+"="+job.cred.String())
	if os.Getuid() == 0 {
		// mpirun refuses to start ranks as root unless told twice; the
		// kernel of a container often runs as root.
		env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	}
	if os.Getenv("OMPI_MCA_btl") == "" {
		// Shared memory within a host, TCP between hosts; no probing for
		// InfiniBand hardware, which prints warnings where there is none.
		env = append(env, "OMPI_MCA_btl=self,vader,tcp")
	}
	// --bind-to none: mpirun binds each rank to one core by default, and Go
	// then runs it with GOMAXPROCS=1.
	args := []string{"--bind-to", "none", "--oversubscribe", "--tag-output", "-np", strconv.Itoa(spec.np)}
	if spec.hostfile != "" {
		args = append(args, "--hostfile", spec.hostfile)
	}
	if spec.hosts != "" {
		args = append(args, "--host", spec.hosts)
	}
	for _, name := range forwardNames(g.cfg.Env) {
		args = append(args, "-x", name)
	}
	args = append(append(args, g.cfg.Command...), "--connect", connectList(offer, ln.Addr().(*net.TCPAddr).Port))
	if g.cfg.MemoryLimit > 0 {
		args = append(args, "--memory-limit", strconv.FormatInt(g.cfg.MemoryLimit, 10))
	}
	job.cmd = exec.Command(mpirun, args...)
	job.cmd.Env = env
	// Its own process group, as a single worker has: the front end's
	// SIGINT to the kernel's group must not reach the job.
	job.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	r, w, err := os.Pipe()
	if err != nil {
		ln.Close()
		closeAll(job.clients)
		return err
	}
	job.cmd.Stdout, job.cmd.Stderr = w, w
	err = job.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		ln.Close()
		closeAll(job.clients)
		return fmt.Errorf("%%workers -np: starting mpirun: %w", err)
	}
	g.cfg.Logger.Debug("worker: mpirun started", "pid", job.cmd.Process.Pid, "args", strings.Join(args, " "))
	read := make(chan struct{})
	go func() {
		job.read(r)
		r.Close()
		close(read)
	}()
	go job.wait(read)
	go job.accept()
	g.mu.job = job
	g.mu.many = job.clients
	return nil
}

// forwardNames is forwardEnv's names that are set, the cluster's, and the
// names the kernel's Config.Env sets.
func forwardNames(extra []string) []string {
	names := []string{ClusterEnv, TokenEnv}
	for _, n := range forwardEnv {
		if _, ok := os.LookupEnv(n); ok {
			names = append(names, n)
		}
	}
	for _, kv := range extra {
		if n, _, ok := strings.Cut(kv, "="); ok {
			names = append(names, n)
		}
	}
	return names
}

// connectList is the --connect list of the addresses a rank may reach the
// listener at, on port.
func connectList(ips []net.IP, port int) string {
	list := make([]string, len(ips))
	for i, ip := range ips {
		list[i] = "tcp:" + net.JoinHostPort(ip.String(), strconv.Itoa(port))
	}
	return strings.Join(list, ",")
}

// accept hands each connection that proves it holds the job's credential
// for one of the job's ranks to that rank's client. Each handshake runs on
// its own goroutine and ends within handshakeTimeout.
func (j *mpiJob) accept() {
	for {
		conn, err := j.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			l, h, err := acceptLink(conn, j.tls, func(h helloMsg) ([]byte, bool) {
				return j.cred.secret, h.ID == j.cred.id && h.Rank >= 0 && h.Rank < len(j.clients)
			})
			if err == nil && j.clients[h.Rank].attach(l, h) {
				return
			}
			if err == nil {
				err = fmt.Errorf("rank %d is connected already", h.Rank)
			}
			j.own.log.Warn("worker: refused a connection", "remote", conn.RemoteAddr().String(), "err", err)
			conn.Close()
		}()
	}
}

// tagged is a line mpirun --tag-output relayed from a rank:
// "[JOB,RANK]<stderr>:text".
var tagged = regexp.MustCompile(`^\[\d+,(\d+)\]<(?:stdout|stderr|stddiag)>:(.*)$`)

// innerTag is a tag mpirun put inside a line: it relays a long line in
// pieces, each tagged.
var innerTag = regexp.MustCompile(`\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:`)

// noticed is mpirun's line naming the rank that ended the job: "mpirun
// noticed that process rank 1 with PID … exited on signal 9", or, for an
// exit status, "Process name: [[20745,1],1]".
var noticed = regexp.MustCompile(`process rank (\d+) .*(?:exited|killed|returned)|Process name: \[\[\d+,\d+\],(\d+)\]`)

// read sorts mpirun's output: a rank's lines (written before its capture
// began, and its diagnostics and crash reports) go to that rank's worker,
// the rest is mpirun's own.
func (j *mpiJob) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := tagged.FindStringSubmatch(line); m != nil {
			if rank, err := strconv.Atoi(m[1]); err == nil && rank < len(j.clients) {
				j.clients[rank].note(innerTag.ReplaceAllString(m[2], ""))
				continue
			}
		}
		j.own.Write([]byte(line + "\n"))
		if m := noticed.FindStringSubmatch(line); m != nil {
			rank, _ := strconv.Atoi(m[1] + m[2])
			j.mu.Lock()
			if j.culprit < 0 {
				j.culprit = rank
			}
			j.mu.Unlock()
		}
	}
}

// wait reaps mpirun and tells every worker's client that the job ended.
func (j *mpiJob) wait(read <-chan struct{}) {
	err := j.cmd.Wait()
	<-read
	j.why = "mpirun " + describeExit(j.cmd, err)
	if s := j.summary(); s != "" {
		j.why += ": " + s
	}
	for _, c := range j.clients {
		c.abandon(j.why)
	}
	close(j.done)
}

// summary says, from mpirun's own output, why the job ended: the line
// naming the rank that died of a signal, or which rank exited with which
// status, or else the last line that is not a rule.
func (j *mpiJob) summary() string {
	var last, rank string
	for _, ln := range strings.Split(string(j.own.bytes()), "\n") {
		ln = strings.TrimSpace(ln)
		if m := noticed.FindStringSubmatch(ln); m != nil {
			if m[1] != "" {
				return ln
			}
			rank = m[2]
		}
		if code, ok := strings.CutPrefix(ln, "Exit code:"); ok && rank != "" {
			return fmt.Sprintf("rank %s exited with status %s", rank, strings.TrimSpace(code))
		}
		if ln != "" && strings.Trim(ln, "-") != "" {
			last = ln
		}
	}
	return last
}

// ownLines is the last n lines of mpirun's own output, rules left out.
func (j *mpiJob) ownLines(n int) []string {
	var out []string
	for _, ln := range strings.Split(string(j.own.bytes()), "\n") {
		if t := strings.TrimSpace(ln); t != "" && strings.Trim(t, "-") != "" {
			out = append(out, "    "+ln)
		}
	}
	return out[max(0, len(out)-n):]
}

// rankThatEnded is the rank mpirun said ended the job, or -1.
func (j *mpiJob) rankThatEnded() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.culprit
}

// stop ends the job: the workers are told to shut down, then mpirun gets
// SIGTERM (it ends its ranks on every host), then SIGKILL.
func (j *mpiJob) stop() {
	j.ln.Close()
	stopped := make(chan struct{})
	go func() { closeAll(j.clients); close(stopped) }()
	select {
	case <-stopped:
	case <-j.done:
		<-stopped
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		select {
		case <-j.done:
			return
		default:
		}
		syscall.Kill(-j.cmd.Process.Pid, sig)
		select {
		case <-j.done:
			return
		case <-time.After(5 * time.Second):
		}
	}
	<-j.done
}
