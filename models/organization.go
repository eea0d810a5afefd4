package models

import (
	"time"
)

// Organization is a customer tenant (or the provider's own organization,
// whose staff act across tenants).
type Organization struct {
	ID         string `gorm:"primaryKey;size:40" json:"id"`
	Name       string `gorm:"size:200;not null" json:"name"`
	Plan       Plan   `gorm:"size:20;not null" json:"plan"`
	CustomerID string `gorm:"size:40;uniqueIndex;not null" json:"customer_id"`
	Provider   bool   `gorm:"not null;default:false" json:"-"`
	// Custom-plan limits (used only when Plan is custom; 0 = unlimited).
	CustomHourly     int       `gorm:"not null;default:0" json:"-"`
	CustomBurst      int       `gorm:"not null;default:0" json:"-"`
	CustomConcurrent int       `gorm:"not null;default:0" json:"-"`
	CreatedAt        time.Time `json:"created_at"`
	UpdatedAt        time.Time `json:"updated_at"`
	// AccessPolicy holds the secondary access controls that bind every
	// credential of the organization (nil: none); see AccessPolicy.
	AccessPolicy *AccessPolicy `gorm:"serializer:json;type:text" json:"access_policy,omitempty"`
}

// Limits returns the organization's plan limits, with the negotiated numbers
// of a custom plan.
func (o *Organization) Limits() PlanLimits {
	l := o.Plan.Limits()
	if o.Plan == PlanCustom {
		l.HourlyLimit, l.BurstLimit, l.Concurrent = o.CustomHourly, o.CustomBurst, o.CustomConcurrent
	}
	return l
}
