package models

import (
	"crypto/rand"
	"strings"
)

// Identifier prefixes (DECISIONS 2): every id is a prefix and random base62 characters.
const (
	PrefixService          = "svc"
	PrefixProvisioning     = "prov"
	PrefixDecommission     = "dec"
	PrefixBulk             = "bulk"
	PrefixWorkflow         = "wf"
	PrefixQuote            = "quo"
	PrefixInvoice          = "inv"
	PrefixPayment          = "pay"
	PrefixPaymentMethod    = "pm"
	PrefixAccount          = "acct"
	PrefixSubscription     = "sub"
	PrefixTicket           = "tkt"
	PrefixComment          = "cmt"
	PrefixAttachment       = "att"
	PrefixReport           = "rpt"
	PrefixReportDefinition = "rdef"
	PrefixRule             = "rule"
	PrefixWebhook          = "wh"
	PrefixEvent            = "evt"
	PrefixAPIKey           = "ak"
	PrefixClient           = "cli"
	PrefixCertificate      = "cert"
	PrefixMFA              = "mfa"
	PrefixOrganization     = "org"
	PrefixCustomer         = "cust"
	PrefixUser             = "usr"
	PrefixRequest          = "req"
	PrefixOperationUnknown = "op"
)

// Base62 is the alphabet of random identifiers.
const Base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n random base62 characters from crypto/rand.
func RandomString(n int) string {
	out := make([]byte, n)
	buf := make([]byte, n+n/2+8)
	i := 0
	for i < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, b := range buf {
			// 248 = 4*62: reject values above it to avoid modulo bias.
			if b >= 248 {
				continue
			}
			out[i] = Base62[int(b)%62]
			i++
			if i == n {
				break
			}
		}
	}
	return string(out)
}

// NewID returns a new identifier with the prefix, e.g. "svc_3fK9...".
func NewID(prefix string) string {
	return prefix + "_" + RandomString(20)
}

// HasPrefix reports whether id is shaped like an identifier of the prefix.
func HasPrefix(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) == 0 || len(rest) > 64 {
		return false
	}
	for _, c := range rest {
		if !strings.ContainsRune(Base62, c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
