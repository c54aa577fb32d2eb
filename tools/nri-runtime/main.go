// nri-test-runtime plays the container runtime for the tests of the agent's NRI plugin: it runs
// containerd's own NRI implementation (github.com/containerd/nri/pkg/adaptation, the code
// containerd links) on a socket, and turns commands read from stdin, one JSON object per line,
// into the pod lifecycle requests containerd would send. Each command gets one JSON answer line
// on stdout: {"ok":true} or {"error":"..."}.
//
//	{"op":"wait-plugins","count":1,"timeout_ms":10000}  until that many plugin connections are
//	                              synchronized (cumulative: a plugin that reconnects counts again)
//	{"op":"run","pod":{...}}      RunPodSandbox (the pod then counts in later synchronizations)
//	{"op":"stop","pod":{...}}     StopPodSandbox
//	{"op":"remove","pod":{...}}   RemovePodSandbox (the pod is forgotten)
//	{"op":"create","pod":{...},"container":"app"}  CreateContainer of that container in the pod
//	{"op":"run-unseen","pod":{...}}  the pod counts as running but no plugin heard of it (its
//	                              RunPodSandbox came while no plugin was connected)
//
// A pod is {"id","uid","name","namespace","netns","networks"}; netns becomes its network
// namespace path, networks its k8s.v1.cni.cncf.io/networks annotation.
// Only the tests use this program; the product is C++.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/containerd/nri/pkg/adaptation"
)

type pod struct {
	ID        string `json:"id"`
	UID       string `json:"uid"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Netns     string `json:"netns"`
	Networks  string `json:"networks"` // the pod's k8s.v1.cni.cncf.io/networks annotation
}

type command struct {
	Op        string `json:"op"`
	Pod       pod    `json:"pod"`
	Container string `json:"container"`
	Count     int    `json:"count"`
	TimeoutMs int    `json:"timeout_ms"`
}

func (p pod) sandbox() *adaptation.PodSandbox {
	s := &adaptation.PodSandbox{
		Id:        p.ID,
		Uid:       p.UID,
		Name:      p.Name,
		Namespace: p.Namespace,
		Linux: &adaptation.LinuxPodSandbox{
			Namespaces: []*adaptation.LinuxNamespace{{Type: "network", Path: p.Netns}},
		},
	}
	// containerd passes the pod's annotations on its sandbox.
	if p.Networks != "" {
		s.Annotations = map[string]string{"k8s.v1.cni.cncf.io/networks": p.Networks}
	}
	return s
}

type runtime struct {
	nri     *adaptation.Adaptation
	mu      sync.Mutex
	pods    map[string]pod
	started bool // Start() returned: later synchronizations are external plugins connecting
	synced  int  // external plugins synchronized so far (a plugin that reconnects counts again)
}

func (r *runtime) sync(ctx context.Context, cb adaptation.SyncCB) error {
	r.mu.Lock()
	var pods []*adaptation.PodSandbox
	for _, p := range r.pods {
		pods = append(pods, p.sandbox())
	}
	r.mu.Unlock()
	if _, err := cb(ctx, pods, nil); err != nil {
		return err
	}
	r.mu.Lock()
	if r.started {
		r.synced++
	}
	r.mu.Unlock()
	return nil
}

// waitPlugins returns once `count` plugin connections (counted since the start, reconnections
// included) are synchronized and joined: the sync lock is held until then, which containerd's
// pod creation relies on too (BlockPluginSync).
func (r *runtime) waitPlugins(count int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		block := r.nri.BlockPluginSync()
		r.mu.Lock()
		n := r.synced
		r.mu.Unlock()
		block.Unblock()
		if n >= count {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d plugin(s) synchronized within %v, want %d", n, timeout, count)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *runtime) do(c command) error {
	ctx := context.Background()
	switch c.Op {
	case "wait-plugins":
		return r.waitPlugins(c.Count, time.Duration(c.TimeoutMs)*time.Millisecond)
	case "run":
		block := r.nri.BlockPluginSync()
		defer block.Unblock()
		if err := r.nri.RunPodSandbox(ctx, &adaptation.RunPodSandboxRequest{Pod: c.Pod.sandbox()}); err != nil {
			return err
		}
		r.mu.Lock()
		r.pods[c.Pod.ID] = c.Pod
		r.mu.Unlock()
		return nil
	case "run-unseen":
		r.mu.Lock()
		r.pods[c.Pod.ID] = c.Pod
		r.mu.Unlock()
		return nil
	case "create":
		block := r.nri.BlockPluginSync()
		defer block.Unblock()
		_, err := r.nri.CreateContainer(ctx, &adaptation.CreateContainerRequest{
			Pod: c.Pod.sandbox(),
			Container: &adaptation.Container{
				Id: c.Pod.ID + "-" + c.Container, PodSandboxId: c.Pod.ID, Name: c.Container,
			},
		})
		return err
	case "stop":
		return r.nri.StopPodSandbox(ctx, &adaptation.StopPodSandboxRequest{Pod: c.Pod.sandbox()})
	case "remove":
		err := r.nri.RemovePodSandbox(ctx, &adaptation.RemovePodSandboxRequest{Pod: c.Pod.sandbox()})
		r.mu.Lock()
		delete(r.pods, c.Pod.ID)
		r.mu.Unlock()
		return err
	}
	return fmt.Errorf("unknown op %q", c.Op)
}

func main() {
	socket := flag.String("socket", "", "the NRI socket to serve")
	requestTimeout := flag.Duration("request-timeout", 10*time.Second, "NRI request timeout")
	registrationTimeout := flag.Duration("registration-timeout", 5*time.Second, "NRI registration timeout")
	flag.Parse()
	if *socket == "" {
		fmt.Fprintln(os.Stderr, "nri-test-runtime: --socket is required")
		os.Exit(2)
	}
	adaptation.SetPluginRequestTimeout(*requestTimeout)
	adaptation.SetPluginRegistrationTimeout(*registrationTimeout)
	r := &runtime{pods: map[string]pod{}}
	nri, err := adaptation.New("nri-test-runtime", "v0", r.sync,
		func(context.Context, []*adaptation.ContainerUpdate) ([]*adaptation.ContainerUpdate, error) {
			return nil, nil
		},
		adaptation.WithSocketPath(*socket), adaptation.WithPluginPath(os.DevNull+".d"),
		adaptation.WithPluginConfigPath(os.DevNull+".d"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "nri-test-runtime:", err)
		os.Exit(1)
	}
	r.nri = nri
	if err := nri.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "nri-test-runtime:", err)
		os.Exit(1)
	}
	defer nri.Stop()
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	fmt.Println(`{"ok":true,"listening":true}`)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var c command
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			_ = out.Encode(map[string]any{"error": "bad command: " + err.Error()})
			continue
		}
		if err := r.do(c); err != nil {
			_ = out.Encode(map[string]any{"error": err.Error()})
		} else {
			_ = out.Encode(map[string]any{"ok": true})
		}
	}
}
