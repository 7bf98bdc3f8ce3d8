package httpserver

import (
	"net/http"
	"slices"

	"github.com/rs/cors"
)

// cors lets the listed origins call the gateway from a browser. With none listed it adds no
// CORS headers at all (rs/cors would read an empty list as "every origin"), so browsers keep
// other sites' pages from reading the answers. Listed origins may send credentials; "*" lets
// every page call the gateway, but never with credentials, which browsers would refuse anyway
// and which would hand any site its visitors' sessions.
func (d Deps) cors(next http.Handler) http.Handler {
	origins := d.Config.Transport.AllowedOrigins
	if len(origins) == 0 {
		return next
	}
	wildcard := slices.Contains(origins, "*")
	if wildcard {
		origins = []string{"*"}
		d.Log.Warn("CORS_ALLOWED_ORIGINS is *: any web page may call the gateway (without credentials); list the front ends' origins instead")
	}
	return cors.New(cors.Options{
		AllowedOrigins:   origins,
		AllowedMethods:   []string{http.MethodGet, http.MethodPost},
		AllowedHeaders:   []string{"Content-Type", "Accept", "Authorization", "GraphQL-Require-Preflight", "Apollo-Require-Preflight", "X-Requested-With"},
		AllowCredentials: !wildcard,
		MaxAge:           600,
	}).Handler(next)
}
