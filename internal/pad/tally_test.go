package pad

import "testing"

// TestTallyBuckets: each value lies in the bounds of its bucket (the
// layout emitTally computes and the drainer reads back with TallyBounds),
// buckets grow with values, and the largest value has a bucket.
func TestTallyBuckets(t *testing.T) {
	prev := -1
	vals := []uint64{0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 1 << 20, 1<<40 + 12345, 1<<63 - 1, 1 << 63, ^uint64(0)}
	for _, v := range vals {
		i := TallyBucket(v)
		if i < prev || i >= TallyBuckets {
			t.Fatalf("%d: bucket %d after %d (of %d)", v, i, prev, TallyBuckets)
		}
		prev = i
		low, width := TallyBounds(i)
		if v < low || v-low >= width {
			t.Fatalf("%d: bucket %d is [%d, %d+%d)", v, i, low, low, width)
		}
	}
}
