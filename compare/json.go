//go:build linux && amd64

package compare

import (
	"encoding/json"
	"io"
)

// WriteJSON writes the report as one indented JSON object.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
