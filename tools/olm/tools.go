//go:build tools

// The programs this module builds, so that go.mod keeps their dependencies.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
	_ "github.com/operator-framework/operator-registry/cmd/opm"
)
