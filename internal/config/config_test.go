package config_test

import (
	"io"
	"testing"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/config"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true}, {"100MiB", 100 << 20, true}, {"5GiB", 5 << 30, true}, {"5GB", 5e9, true},
		{"1 KiB", 1024, true}, {"12B", 12, true}, {"0", 0, false}, {"-1", 0, false}, {"lots", 0, false},
		{"1.5GiB", 0, false}, {"9999999999GiB", 0, false},
	} {
		got, err := config.ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestSandboxDefaults(t *testing.T) {
	cfg, err := config.LoadSandbox(nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9090" || cfg.Options.MaxFileSize != advisorspec.MaxFileSize ||
		cfg.Options.AccessToken != "" || cfg.TokenFromEnv || cfg.CredentialsFromEnv {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestGatewayDefaults(t *testing.T) {
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil || cfg.Addr != ":8080" {
		t.Errorf("Load() = %+v, %v; want Addr :8080", cfg, err)
	}
}
