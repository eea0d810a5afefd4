package services

import (
	"fmt"
	"slices"
	"strings"

	"github.com/telcoplatform/platform/models"
)

// PhoneNumberOrder asks for phone numbers (spec 2.1).
type PhoneNumberOrder struct {
	Type     string `json:"type" required:"true" enum:"local,toll_free" maxLength:"10" example:"local" doc:"Required: local or toll_free"`
	AreaCode string `json:"area_code,omitempty" maxLength:"3" example:"512" doc:"Required for local numbers: a three-digit area code"`
	Quantity int    `json:"quantity" required:"true" minimum:"1" maximum:"1000" example:"10" doc:"Required: 1 to 1000"`
}

// PhoneSystemBody is the phone system create body (spec 2.1).
type PhoneSystemBody struct {
	AccountID    string             `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	SystemType   string             `json:"system_type" required:"true" enum:"cloud_pbx,hybrid_pbx" maxLength:"20" example:"cloud_pbx" doc:"Required: cloud_pbx or hybrid_pbx"`
	Features     []string           `json:"features,omitempty" maxItems:"20" doc:"auto_attendant, call_forwarding, voicemail_to_email, conference_bridge, call_recording, hunt_groups, call_analytics"`
	Users        int                `json:"users" required:"true" minimum:"1" maximum:"10000" example:"50" doc:"Required: 1 to 10000"`
	PhoneNumbers []PhoneNumberOrder `json:"phone_numbers,omitempty" maxItems:"20" doc:"Numbers to assign from the number blocks; at most 1000 in all, and at most 10 per user"`
	Integrations []string           `json:"integrations,omitempty" maxItems:"10" doc:"Identifiers of the systems to integrate with (lowercase, e.g. crm, helpdesk)"`
	SLA          string             `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard or premium (the offer's options); default standard"`
	OrderExtras
}

// ServiceKind returns phone_system.
func (b *PhoneSystemBody) ServiceKind() string { return KindPhoneSystem }

var (
	phoneSystemTypes = []string{"cloud_pbx", "hybrid_pbx"}
	numberTypes      = []string{"local", "toll_free"}
)

// checkNumbers validates phone number requests into o.Numbers.
func checkNumbers(v *models.Validator, field string, in []PhoneNumberOrder, o *ProvisioningOrder) int {
	total := 0
	for i, n := range in {
		f := fmt.Sprintf("%s[%d]", field, i)
		nr := NumberRequest{Type: strings.TrimSpace(n.Type), AreaCode: strings.TrimSpace(n.AreaCode), Quantity: n.Quantity}
		v.Check(slices.Contains(numberTypes, nr.Type), f+".type", "must be local or toll_free")
		switch nr.Type {
		case "local":
			v.Check(svcAreaCodePattern.MatchString(nr.AreaCode), f+".area_code", "is required for local numbers: three digits, the first 2-9")
		case "toll_free":
			v.Check(nr.AreaCode == "", f+".area_code", "must be omitted for toll_free numbers")
		}
		v.Check(nr.Quantity >= 1 && nr.Quantity <= 1000, f+".quantity", "must be from 1 to 1000")
		total += max(nr.Quantity, 0)
		o.Numbers = append(o.Numbers, nr)
	}
	v.Check(total <= 1000, field, "must ask for at most 1000 numbers in all")
	return total
}

func (b *PhoneSystemBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.SystemType)
	if p.required(o.ServiceType != "", "system_type") {
		v.Check(slices.Contains(phoneSystemTypes, o.ServiceType), "system_type", "must be one of "+strings.Join(phoneSystemTypes, ", "))
	} else {
		o.ServiceType = "cloud_pbx"
	}
	prof, _ := LookupKind(KindPhoneSystem)
	o.Features = CheckList(v, "features", b.Features, prof.Features, 0, 20)
	CheckList(v, "integrations", b.Integrations, nil, 0, 10)
	if p.required(b.Users != 0, "users") {
		v.Check(b.Users >= 1 && b.Users <= 10000, "users", "must be from 1 to 10000")
	}
	o.Quantity = max(b.Users, 1)
	total := checkNumbers(v, "phone_numbers", b.PhoneNumbers, o)
	if b.Users > 0 {
		v.Check(total <= 10*b.Users, "phone_numbers", "must ask for at most 10 numbers per user")
	}
	return nil
}
