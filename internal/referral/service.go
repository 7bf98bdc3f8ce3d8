package referral

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/advisorhq/gateway/internal/advisorspec"
	"github.com/advisorhq/gateway/internal/apperr"
	"github.com/advisorhq/gateway/internal/family"
)

// Product is what the client is referred for: 1 will (the default), 2 trust, 3 ahcd, 4 fpoa.
// GraphQL spells it WILL, TRUST, AHCD, FPOA.
type Product int

func (p Product) MarshalGQL(w io.Writer) {
	if p < 1 || int(p) > len(advisorspec.ReferralProducts) {
		p = advisorspec.DefaultReferralProduct
	}
	_, _ = io.WriteString(w, strconv.Quote(strings.ToUpper(advisorspec.ReferralProducts[p-1])))
}

func (p *Product) UnmarshalGQL(v any) error {
	s, _ := v.(string)
	i := slices.Index(advisorspec.ReferralProducts, strings.ToLower(s))
	if i < 0 || strings.ToUpper(s) != s {
		names := make([]string, len(advisorspec.ReferralProducts))
		for i, n := range advisorspec.ReferralProducts {
			names[i] = strings.ToUpper(n)
		}
		return apperr.BadEnumValue("ReferralProduct", v, names)
	}
	*p = Product(i + 1)
	return nil
}

// Input is referClient's input.
type Input struct {
	Product Product
	Token   *string
	User    User
}

// User is the person referred: referClient's input, and what its answer echoes.
type User struct {
	Email         string
	FirstName     string
	LastName      string
	HasPets       *bool
	MaritalStatus *family.MaritalStatus
	Address       *Address
}

// Address is the user's address, with the names of a client's address (ClientAddress).
type Address struct {
	Line1 string
	Line2 *string
	City  string
	State string
	Zip   string
}

// Referral is a referral made: the service's token and address, and what was referred.
type Referral struct {
	ReferralToken string
	URL           string
	PartnerID     string
	Product       Product
	Token         *string
	User          User
}

// Service makes referrals; its zero value and nil answer that referrals are not configured.
type Service struct {
	client *Client
}

// NewService returns a service calling client; nil client leaves referrals off.
func NewService(client *Client) *Service { return &Service{client: client} }

// Refer checks in against the field table, then refers the user to partnerID. Nothing is sent
// when the input breaks a rule.
func (s *Service) Refer(ctx context.Context, partnerID string, in Input) (*Referral, error) {
	ref, err := in.wire()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(partnerID) == "" {
		return nil, apperr.Input("partnerId", "partnerId must not be blank")
	}
	if s == nil || s.client == nil {
		return nil, apperr.New(apperr.UpstreamUnavailable,
			"Referrals are off: set REFERRAL_URL, REFERRAL_API_KEY and REFERRAL_SIGNING_SECRET to the referral service's address and credentials")
	}
	ans, err := s.client.Refer(ctx, partnerID, ref)
	if err != nil {
		return nil, err
	}
	product := in.Product
	if product == 0 {
		product = advisorspec.DefaultReferralProduct
	}
	return &Referral{ReferralToken: ans.ReferralToken, URL: ans.URL, PartnerID: partnerID, Product: product, Token: in.Token, User: in.User}, nil
}

// wire is the input as the service's body, checked by the same rules the service applies, so
// the caller reads a message in the schema's names without a call.
func (in Input) wire() (advisorspec.Referral, error) {
	u := in.User
	ref := advisorspec.Referral{Product: int(in.Product), User: advisorspec.ReferralUser{
		Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, HasPets: u.HasPets,
	}}
	if ref.Product == 0 {
		ref.Product = advisorspec.DefaultReferralProduct
	}
	if in.Token != nil {
		// An empty token would travel as none (omitempty): refuse it as the service would.
		if strings.TrimSpace(*in.Token) == "" {
			return ref, apperr.Input("input.token", "input.token must not be blank")
		}
		ref.Token = *in.Token
	}
	if u.MaritalStatus != nil {
		i := slices.Index(advisorspec.ReferralMaritalStatuses, string(*u.MaritalStatus))
		if i < 0 {
			var b strings.Builder
			u.MaritalStatus.MarshalGQL(&b)
			return ref, apperr.Input("input.user.maritalStatus", fmt.Sprintf(
				"input.user.maritalStatus: the referral service takes no %s; it takes SINGLE, MARRIED, DOMESTIC_PARTNERSHIP, CIVIL_UNION, ENGAGED or OTHER_COMMITTED_RELATIONSHIP",
				strings.Trim(b.String(), `"`)))
		}
		ref.User.MaritalStatus = i + 1
	}
	if a := u.Address; a != nil {
		ref.User.Address = &advisorspec.ReferralAddress{Line1: a.Line1, City: a.City, State: a.State, PostalCode: a.Zip}
		if a.Line2 != nil {
			ref.User.Address.Line2 = *a.Line2
		}
	}
	// The service's own parser over the bytes that would be sent: one set of rules.
	body, _ := json.Marshal(ref)
	if _, err := advisorspec.ParseReferral(body); err != nil {
		field := schemaPath(err.Field)
		msg := err.Message
		if rest, ok := strings.CutPrefix(msg, err.Field); ok && err.Field != "" {
			msg = field + rest
		}
		return ref, apperr.Input(field, msg)
	}
	return ref, nil
}

// isBodyField reports whether s names a field of the referral body, such as user.address.city.
func isBodyField(s string) bool {
	return s == "product" || s == "token" || s == "user" || strings.HasPrefix(s, "user.") && !strings.ContainsAny(s, "\"'(),:")
}

// schemaPath names a field of the service's body by its path in referClient's arguments.
func schemaPath(field string) string {
	if field == "" {
		return "input"
	}
	parts := strings.Split(field, ".")
	for i, p := range parts {
		switch p {
		case "address_line1":
			parts[i] = "line1"
		case "address_line2":
			parts[i] = "line2"
		case "postal_code":
			parts[i] = "zip"
		}
	}
	return "input." + strings.Join(parts, ".")
}
