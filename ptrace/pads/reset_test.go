package pads

import (
	"reflect"
	"testing"

	"github.com/utap/utap/probe"
)

// TestResetEvent: resetEvent clears every field record does not set, so
// a field added to probe.Event is never carried from one event to the
// next.
func TestResetEvent(t *testing.T) {
	var ev probe.Event
	v := reflect.ValueOf(&ev).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(1)
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.String:
			f.SetString("x")
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("field %s: kind %s not handled here", v.Type().Field(i).Name, f.Kind())
		}
	}
	resetEvent(&ev)
	set := map[string]bool{"TimeNs": true, "PID": true, "TID": true, "Probe": true, "Func": true, "Kind": true, "ProbeIndex": true}
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if !set[name] && !v.Field(i).IsZero() {
			t.Errorf("resetEvent leaves %s", name)
		}
	}
}
