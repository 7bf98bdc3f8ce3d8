package advisorspec

import (
	"encoding/json"
	"net/http"
	"strings"
)

// ReadErrorBody reads the message of an error answer of any of the service's hosts. The
// specification leaves the body's shape open; the project decides {"message": ...} (with
// "wid" on a top-account conflict), and its clients also take {"error": "..."},
// {"error": {"message": ...}} and short plain text. Anything else is the status's text.
func ReadErrorBody(status int, body []byte) (message, wid string) {
	var b struct {
		Message string          `json:"message"`
		WID     string          `json:"wid"`
		Error   json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil {
		if b.Message != "" {
			return b.Message, b.WID
		}
		var s string
		var nested struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(b.Error, &s) == nil && s != "":
			return s, b.WID
		case json.Unmarshal(b.Error, &nested) == nil && nested.Message != "":
			return nested.Message, b.WID
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" && len(text) <= 500 && !strings.HasPrefix(text, "<") && !strings.HasPrefix(text, "{") {
		return text, ""
	}
	return http.StatusText(status), ""
}
