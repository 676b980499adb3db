package summary

import (
	"encoding/json"
	"io"
)

// Report is the JSON form of the summary: one object, functions in report
// order. Times are in ns.
type Report struct {
	Functions []Line `json:"functions"`
	Total     Line   `json:"total"`
}

// WriteJSON writes the report as one JSON object on one line.
func (s *Summary) WriteJSON(w io.Writer) error {
	funcs, total := s.Lines()
	if funcs == nil {
		funcs = []Line{}
	}
	return json.NewEncoder(w).Encode(Report{Functions: funcs, Total: total})
}
