package sccache

import "testing"

// DecodeFields reads what a cache service answers: it never panics and
// what it decodes encodes to a message it decodes the same.
func FuzzDecodeFields(f *testing.F) {
	f.Add(Fields{FieldOK: true, FieldURL: "http://127.0.0.1/blob/1"}.Encode())
	f.Add([]byte{0x08, 0x01, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeFields(data)
		if err != nil {
			return
		}
		again, err := DecodeFields(got.Encode())
		if err != nil || len(again) != len(got) {
			t.Fatalf("%v re-encoded as %v (%v)", got, again, err)
		}
	})
}
