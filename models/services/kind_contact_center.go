package services

import (
	"slices"
	"strings"
)

// AIFeatures are a contact center's AI features (spec 2.1).
type AIFeatures struct {
	SentimentAnalysis bool `json:"sentiment_analysis,omitempty"`
	AutoTranscription bool `json:"auto_transcription,omitempty"`
	PredictiveDialing bool `json:"predictive_dialing,omitempty"`
}

// ContactCenterBody is the contact center create body (spec 2.1).
type ContactCenterBody struct {
	AccountID  string      `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	CenterType string      `json:"center_type" required:"true" enum:"omnichannel,inbound,outbound,blended" maxLength:"20" example:"omnichannel" doc:"Required: omnichannel (two or more channels), inbound, outbound or blended"`
	Channels   []string    `json:"channels" required:"true" minItems:"1" enum:"voice,chat,email,sms" example:"[\"voice\",\"chat\"]" maxItems:"4" doc:"Required: voice, chat, email, sms"`
	AgentCount int         `json:"agent_count" required:"true" minimum:"1" maximum:"5000" example:"25" doc:"Required: 1 to 5000"`
	Features   []string    `json:"features,omitempty" maxItems:"10" doc:"intelligent_routing, real_time_analytics, call_recording, quality_monitoring, workforce_management"`
	AIFeatures *AIFeatures `json:"ai_features,omitempty"`
	SLA        string      `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns contact_center.
func (b *ContactCenterBody) ServiceKind() string { return KindContactCenter }

var (
	centerTypes    = []string{"omnichannel", "inbound", "outbound", "blended"}
	centerChannels = []string{"voice", "chat", "email", "sms"}
)

func (b *ContactCenterBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.CenterType)
	if p.required(o.ServiceType != "", "center_type") {
		v.Check(slices.Contains(centerTypes, o.ServiceType), "center_type", "must be one of "+strings.Join(centerTypes, ", "))
	} else {
		o.ServiceType = "omnichannel"
	}
	var channels []string
	if p.required(len(b.Channels) > 0, "channels") {
		channels = CheckList(v, "channels", b.Channels, centerChannels, 1, 4)
	}
	voice := slices.Contains(channels, "voice")
	if o.ServiceType == "omnichannel" && len(b.Channels) > 0 {
		v.Check(len(channels) >= 2, "channels", "omnichannel needs at least two channels")
	}
	if (o.ServiceType == "outbound" || o.ServiceType == "inbound" || o.ServiceType == "blended") && len(b.Channels) > 0 {
		v.Check(voice, "channels", o.ServiceType+" centers need the voice channel")
	}
	if p.required(b.AgentCount != 0, "agent_count") {
		v.Check(b.AgentCount >= 1 && b.AgentCount <= 5000, "agent_count", "must be from 1 to 5000")
	}
	o.Quantity = max(b.AgentCount, 1)
	prof, _ := LookupKind(KindContactCenter)
	o.Features = CheckList(v, "features", b.Features, prof.Features, 0, 10)
	if slices.Contains(o.Features, "call_recording") && len(channels) > 0 {
		v.Check(voice, "features", "call_recording needs the voice channel")
	}
	if ai := b.AIFeatures; ai != nil && len(channels) > 0 {
		v.Check(!ai.AutoTranscription || voice, "ai_features.auto_transcription", "needs the voice channel")
		v.Check(!ai.PredictiveDialing || voice, "ai_features.predictive_dialing", "needs the voice channel")
		v.Check(!ai.PredictiveDialing || o.ServiceType != "inbound", "ai_features.predictive_dialing", "dials out: not available to inbound centers")
	}
	if voice {
		o.Numbers = append(o.Numbers, NumberRequest{Type: "toll_free", Quantity: 1})
	}
	return nil
}
