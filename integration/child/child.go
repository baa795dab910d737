// Package child starts the processes a test or a rig runs beside itself
// (raild, etcd, kube-apiserver, claimers) so that they die with the
// process that started them, and only with it.
//
// Pdeathsig follows the thread that forked the child, not the process: a
// child forked from an ordinary goroutine gets SIGKILL as soon as the Go
// runtime ends that thread, which it does whenever a goroutine that locked
// a thread ends without unlocking it (netns helpers, another child's
// waiter). Start forks from a thread locked until the child exits.
package child

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Proc is a started child.
type Proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd with Pdeathsig SIGKILL from a thread that stays locked
// until cmd exits. enter, when not nil, runs on that thread before the fork
// (e.g. to enter a network namespace; the thread is never reused, so it
// may be left changed). Other SysProcAttr fields of cmd are kept.
func Start(cmd *exec.Cmd, enter func() error) (*Proc, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	p := &Proc{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the thread ends with this goroutine, after the
		// child has exited.
		runtime.LockOSThread()
		var err error
		if enter != nil {
			err = enter()
		}
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err != nil {
			return
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	return p, nil
}

// Done is closed once the child has exited and been reaped.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Err is cmd.Wait's error; read it after Done is closed.
func (p *Proc) Err() error { return p.err }

// Wait waits for the exit and returns cmd.Wait's error.
func (p *Proc) Wait() error {
	<-p.done
	return p.err
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the child; a child that has exited is not an error.
func (p *Proc) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, syscall.ESRCH) && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.cmd.Path, err)
	}
	return nil
}

// Stop sends SIGTERM, waits up to grace, then sends SIGKILL and waits for
// the exit. It reports whether the child had to be killed.
func (p *Proc) Stop(grace time.Duration) (killed bool) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return false
	case <-time.After(grace):
	}
	_ = p.Signal(syscall.SIGKILL)
	<-p.done
	return true
}
