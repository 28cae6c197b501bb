// A single-process Temporal server (SQLite in memory) from go.temporal.io/server v1.30, for the tests
// and the benchmark of upgrade at continue-as-new: the embedded dev server (Temporal CLI v1.5.1,
// server 1.29.1) ignores a continue-as-new's initial versioning behavior, and the CLI releases that
// embed a newer server cannot be built from the module proxy (their cliext module is not served).
//
// It prints one line, `ready <host:port> <namespace>`, once the frontend answers, and runs until
// stdin closes or it gets SIGTERM/SIGINT. Dynamic config comes as repeated `-dynamic KEY=JSON`.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"
)

type settings []string

func (s *settings) String() string     { return strings.Join(*s, ",") }
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var dynamic settings
	flag.Var(&dynamic, "dynamic", "dynamic config KEY=JSON (repeatable)")
	namespace := flag.String("namespace", "default", "the namespace to register (temporaltest registers only a random one)")
	flag.Parse()

	config := dynamicconfig.StaticClient{
		// temporaltest's own setting, kept because an override replaces its whole client.
		dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
	}
	for _, setting := range dynamic {
		key, raw, found := strings.Cut(setting, "=")
		if !found {
			fail("-dynamic %q: want KEY=JSON", setting)
		}
		var value any
		if err := json.Unmarshal([]byte(raw), &value); err != nil {
			fail("-dynamic %s: the value is not JSON: %v", key, err)
		}
		config[dynamicconfig.MakeKey(key)] = []dynamicconfig.ConstrainedValue{{Value: value}}
	}

	server := temporaltest.NewServer(temporaltest.WithBaseServerOptions(temporal.WithDynamicConfigClient(config)))
	if err := registerNamespace(server.GetFrontendHostPort(), *namespace); err != nil {
		server.Stop()
		fail("namespace %s: %v", *namespace, err)
	}
	fmt.Printf("ready %s %s\n", server.GetFrontendHostPort(), *namespace)

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		// The parent closing our stdin (it exited, even by SIGKILL) stops the server too.
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		stop <- syscall.SIGTERM
	}()
	<-stop
	server.Stop()
}

// registerNamespace registers the namespace and waits until the frontend's namespace cache serves it
// (it refreshes every 2 s), so that the first client call after `ready` finds it.
func registerNamespace(hostPort, namespace string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace, Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace:                        namespace,
		WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	})
	if err != nil {
		return err
	}
	for {
		_, err = c.WorkflowService().ListOpenWorkflowExecutions(ctx, &workflowservice.ListOpenWorkflowExecutionsRequest{Namespace: namespace, MaximumPageSize: 1})
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// quiet drops the SDK client's own logs: stdout carries only the ready line.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(2)
}
