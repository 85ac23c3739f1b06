package evidence

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseAge reads an age limit: a number of days such as "30d", or a Go
// duration such as "720h". It must be positive.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100_000 {
			return 0, fmt.Errorf("age %q: want a whole number of days such as 30d, or a duration such as 720h", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		v, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("age %q: want a whole number of days such as 30d, or a duration such as 720h", s)
		}
		d = v
	}
	if d <= 0 {
		return 0, fmt.Errorf("age %q: must be more than zero", s)
	}
	return d, nil
}

// FormatAge writes an age in days when it is at least one ("31d"), else as
// a Go duration rounded to the minute.
func FormatAge(d time.Duration) string {
	if d >= 24*time.Hour {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return d.Round(time.Minute).String()
}
