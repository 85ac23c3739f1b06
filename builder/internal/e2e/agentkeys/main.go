// Command agentkeys prints the SHA-256 fingerprints of the keys an SSH agent
// holds, comma-separated, as `ssh-add -l` lists them: the tests' probe for
// an SSH agent forwarded into a router stage, whose stand-in bases are
// busybox (no ssh-add, and busybox's nc cannot open a unix socket). It
// takes the agent's socket as its one argument and fails when the agent
// cannot be reached or holds no key.
package main

import (
	"fmt"
	"net"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: agentkeys SOCKET")
		os.Exit(2)
	}
	conn, err := net.Dial("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentkeys:", err)
		os.Exit(1)
	}
	defer conn.Close()
	keys, err := agent.NewClient(conn).List()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentkeys:", err)
		os.Exit(1)
	}
	if len(keys) == 0 {
		fmt.Fprintln(os.Stderr, "agentkeys: the agent has no key")
		os.Exit(1)
	}
	prints := make([]string, len(keys))
	for i, k := range keys {
		prints[i] = ssh.FingerprintSHA256(k)
	}
	fmt.Println(strings.Join(prints, ","))
}
