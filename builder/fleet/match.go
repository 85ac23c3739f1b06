package fleet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Matches reports whether a node with these labels meets the affinity's
// required node selector, as the scheduler reads it: any term, every
// requirement of a term (apimachinery's label selectors, which the
// scheduler's node affinity is built on).
func Matches(a *corev1.NodeAffinity, nodeLabels map[string]string) (bool, error) {
	if a == nil || a.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true, nil
	}
	ops := map[corev1.NodeSelectorOperator]selection.Operator{
		corev1.NodeSelectorOpIn: selection.In, corev1.NodeSelectorOpNotIn: selection.NotIn,
		corev1.NodeSelectorOpExists: selection.Exists, corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
		corev1.NodeSelectorOpGt: selection.GreaterThan, corev1.NodeSelectorOpLt: selection.LessThan,
	}
	for _, term := range a.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		sel := labels.NewSelector()
		for _, r := range term.MatchExpressions {
			op, ok := ops[r.Operator]
			if !ok {
				return false, fmt.Errorf("node selector operator %q is not one Kubernetes knows", r.Operator)
			}
			req, err := labels.NewRequirement(r.Key, op, r.Values)
			if err != nil {
				return false, err
			}
			sel = sel.Add(*req)
		}
		if sel.Matches(labels.Set(nodeLabels)) {
			return true, nil
		}
	}
	return false, nil
}
