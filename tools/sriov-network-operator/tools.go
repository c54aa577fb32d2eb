//go:build tools

// The SR-IOV network operator, pinned, for the migration test (docs/migration.md): the test
// runs upstream's own operator next to ours. Built by scripts/build-sriov-network-operator.sh.
package tools

import _ "github.com/k8snetworkplumbingwg/sriov-network-operator"
