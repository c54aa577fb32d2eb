//go:build tools

// The program this module builds, so that go.mod keeps its dependencies.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
