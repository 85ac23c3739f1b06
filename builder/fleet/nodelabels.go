package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"k8s.io/client-go/rest"
)

// FieldManager is the server-side apply field manager of the node labels
// jetbake applies: it owns them, so a label the host no longer has is
// removed at the next apply.
const FieldManager = "jetbake-doctor"

// NodeLabeler applies node labels to one node with server-side apply.
type NodeLabeler struct {
	// Server is the API server's URL; Client carries its credentials.
	Server string
	Client *http.Client
}

// InClusterLabeler is a NodeLabeler with the pod's service account
// (client-go's in-cluster configuration).
func InClusterLabeler() (*NodeLabeler, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("not in a Kubernetes pod with a service account (%w): run the labelling DaemonSet, or write a feature file for node-feature-discovery with --node-labels", err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &NodeLabeler{Server: cfg.Host, Client: client}, nil
}

// Apply sets the node's labels under jetbake's field manager: one PATCH of
// the node's metadata.labels, which the RBAC verb "patch" on nodes allows.
func (l *NodeLabeler) Apply(ctx context.Context, node string, labels map[string]string) error {
	body, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": node, "labels": labels}})
	if err != nil {
		return err
	}
	u := l.Server + "/api/v1/nodes/" + url.PathEscape(node) + "?fieldManager=" + FieldManager + "&force=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/apply-patch+yaml")
	req.Header.Set("Accept", "application/json")
	resp, err := l.Client.Do(req)
	if err != nil {
		return fmt.Errorf("label node %s: %w", node, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var status struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(msg, &status) == nil && status.Message != "" {
			msg = []byte(status.Message)
		}
		return fmt.Errorf("label node %s: the API server answered %s: %s", node, resp.Status, msg)
	}
	return nil
}
