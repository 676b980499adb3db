package pad

import "testing"

func TestFSGSBaseHere(t *testing.T) {
	t.Logf("rdfsbase available: %v", FSGSBase())
}
