package tenant

import (
	"context"
	"net/http"
	"slices"

	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/callerauth"
)

// Policy admits callers into their firm and says whom they may act for.
type Policy struct {
	Firms *Directory
	// AdminRole, when set, is the role (in the caller's roles claim) that may act for any
	// advisor or team of its firm on the v1 paths. Empty: nobody may.
	AdminRole string
}

// The refusals' messages. They never say which firms the gateway serves.
const (
	msgUnservedFirm = "Forbidden: this gateway does not serve the firm of the caller's token"
	msgNoCaller     = "Forbidden: the gateway serves several firms and cannot tell the caller's"
)

// Admit returns ctx acting for the firm of the caller in it. A caller whose token names a firm
// the gateway does not serve is refused, before anything reaches the upstream. Without a caller
// (AUTH_DISABLED: something in front of the gateway vouches for every request) a one-firm
// gateway acts for its firm; a gateway of several firms cannot tell whose data to serve and
// refuses (configuration forbids that combination, so this is a second lock).
func (p *Policy) Admit(ctx context.Context) (context.Context, error) {
	c, ok := callerauth.FromContext(ctx)
	if !ok {
		if f := p.Firms.Only(); f != nil {
			return WithFirm(ctx, f), nil
		}
		return ctx, &Refusal{Message: msgNoCaller}
	}
	f, ok := p.Firms.Lookup(c.FirmID)
	if !ok {
		return ctx, &Refusal{Message: msgUnservedFirm}
	}
	return WithFirm(ctx, f), nil
}

// Authenticate wraps a transport's authenticate function (nil: none, as with AUTH_DISABLED) so
// that every caller it lets in is also admitted into its firm.
func (p *Policy) Authenticate(authenticate func(context.Context, http.Header) (context.Context, error)) func(context.Context, http.Header) (context.Context, error) {
	return func(ctx context.Context, h http.Header) (context.Context, error) {
		if authenticate != nil {
			var err error
			if ctx, err = authenticate(ctx, h); err != nil {
				return ctx, err
			}
		}
		return p.Admit(ctx)
	}
}

// ActingFor is the advisor and team a v1 call acts for: the caller's own, from its token, when
// the request names none. Naming another advisor or team needs AdminRole. Without a caller
// (AUTH_DISABLED) the request's words stand, as whatever is in front of the gateway allowed them.
func (p *Policy) ActingFor(ctx context.Context, advisorID, teamID string) (advisor, team string, err error) {
	c, ok := callerauth.FromContext(ctx)
	if !ok {
		return advisorID, teamID, nil
	}
	admin := p.AdminRole != "" && slices.Contains(c.Roles, p.AdminRole)
	if advisorID == "" {
		advisorID = c.AdvisorID
	} else if advisorID != c.AdvisorID && !admin {
		return "", "", apperr.New(apperr.Forbidden, "advisorId names another advisor; a caller acts as the advisor of its token"+p.roleHint())
	}
	if teamID == "" {
		teamID = c.TeamID
	} else if teamID != c.TeamID && !admin {
		return "", "", apperr.New(apperr.Forbidden, "teamId names another team; a caller acts for the team of its token"+p.roleHint())
	}
	return advisorID, teamID, nil
}

func (p *Policy) roleHint() string {
	if p.AdminRole == "" {
		return ""
	}
	return " unless it has the role " + p.AdminRole
}
