package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/events"
	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/support"
	"github.com/telcoplatform/platform/tracker"
	"github.com/telcoplatform/platform/webhooks"
	"github.com/telcoplatform/platform/workflows"
)

// trackerTestTimeout bounds the call of a tracker integration's test.
const trackerTestTimeout = 10 * time.Second

// TrackerPriorityMappingBody names the tracker priority of each ticket priority.
type TrackerPriorityMappingBody struct {
	Critical string `json:"critical,omitempty" maxLength:"60" example:"Highest" doc:"Default Highest"`
	High     string `json:"high,omitempty" maxLength:"60" example:"High" doc:"Default High"`
	Medium   string `json:"medium,omitempty" maxLength:"60" example:"Medium" doc:"Default Medium"`
	Low      string `json:"low,omitempty" maxLength:"60" example:"Low" doc:"Default Low"`
}

func (b *TrackerPriorityMappingBody) mapping() support.PriorityMapping {
	if b == nil {
		return support.PriorityMapping{}
	}
	return support.PriorityMapping{Critical: b.Critical, High: b.High, Medium: b.Medium, Low: b.Low}
}

// TrackerSyncSettingsBody is what a tracker integration syncs.
type TrackerSyncSettingsBody struct {
	CreateTrackerIssues bool                        `json:"create_tracker_issues,omitempty" doc:"Default false. Each new ticket of the organization and environment becomes one issue"`
	SyncComments        bool                        `json:"sync_comments,omitempty" doc:"Default false. Customer-visible comments are posted to the issue, and the issue's comments are added to the ticket"`
	PriorityMapping     *TrackerPriorityMappingBody `json:"priority_mapping,omitempty" doc:"The tracker priority of each ticket priority; absent or blank ones take the defaults (Highest, High, Medium, Low)"`
}

// TrackerSyncSettingsPatch changes what a tracker integration syncs;
// absent fields stay.
type TrackerSyncSettingsPatch struct {
	CreateTrackerIssues *bool                       `json:"create_tracker_issues,omitempty"`
	SyncComments        *bool                       `json:"sync_comments,omitempty"`
	PriorityMapping     *TrackerPriorityMappingBody `json:"priority_mapping,omitempty" doc:"Replaces the mapping (blank ones take the defaults)"`
}

// TrackerIntegrationBody is the body of POST /v1/support/integrations/tracker.
type TrackerIntegrationBody struct {
	TrackerURL   string                  `json:"tracker_url" required:"true" minLength:"1" maxLength:"2000" example:"https://tracker.example.com" doc:"Required: the tracker's base URL (its REST API is under /rest/api/2); https to a host that resolves to public addresses only (http to a loopback host only where the platform allows private targets); no query nor fragment"`
	Username     string                  `json:"username" required:"true" minLength:"1" maxLength:"200" example:"support-bot@example.com" doc:"Required: the tracker account the calls are made as"`
	APIToken     string                  `json:"api_token" required:"true" minLength:"1" maxLength:"1000" example:"<API_TOKEN>" doc:"Required: the account's API token (basic authentication); stored sealed and never answered"`
	ProjectKey   string                  `json:"project_key" required:"true" minLength:"2" maxLength:"10" pattern:"^[A-Z][A-Z0-9_]+$" example:"OPS" doc:"Required: the project issues are created in"`
	SyncSettings TrackerSyncSettingsBody `json:"sync_settings,omitempty" required:"false" doc:"Optional: absent, every setting takes its default (no issues created, no comments synced, the default priority mapping)"`
	Active       *bool                   `json:"active,omitempty" doc:"false creates it paused (default true)"`
}

// TrackerIntegrationPatchBody changes a tracker integration; absent fields stay.
type TrackerIntegrationPatchBody struct {
	TrackerURL   *string                   `json:"tracker_url,omitempty" minLength:"1" maxLength:"2000"`
	Username     *string                   `json:"username,omitempty" minLength:"1" maxLength:"200"`
	APIToken     *string                   `json:"api_token,omitempty" minLength:"1" maxLength:"1000" doc:"Replaces the token"`
	ProjectKey   *string                   `json:"project_key,omitempty" minLength:"2" maxLength:"10" pattern:"^[A-Z][A-Z0-9_]+$"`
	SyncSettings *TrackerSyncSettingsPatch `json:"sync_settings,omitempty"`
	Active       *bool                     `json:"active,omitempty" doc:"false pauses it (its sync stops), true resumes it"`
}

// TrackerSyncSettingsItem is what a tracker integration syncs.
type TrackerSyncSettingsItem struct {
	CreateTrackerIssues bool                       `json:"create_tracker_issues"`
	SyncComments        bool                       `json:"sync_comments"`
	PriorityMapping     TrackerPriorityMappingBody `json:"priority_mapping"`
}

// TrackerIntegrationItem is a support tracker integration (never its token).
type TrackerIntegrationItem struct {
	ID            string                  `json:"id" example:"trk_3fK9aZ"`
	Type          string                  `json:"type" enum:"tracker"`
	TrackerURL    string                  `json:"tracker_url"`
	Username      string                  `json:"username"`
	APITokenSet   bool                    `json:"api_token_set" doc:"A token is stored; it is never answered"`
	APITokenLast4 string                  `json:"api_token_last4" doc:"The token's last four characters (empty for a token of four or fewer)"`
	ProjectKey    string                  `json:"project_key"`
	SyncSettings  TrackerSyncSettingsItem `json:"sync_settings"`
	Active        bool                    `json:"active"`
	LastError     *string                 `json:"last_error" doc:"The last failed call to the tracker, cleared by the next that works"`
	LastErrorAt   *string                 `json:"last_error_at"`
	CreatedAt     string                  `json:"created_at"`
	UpdatedAt     string                  `json:"updated_at"`
}

func trackerIntegrationItem(c *support.TrackerIntegration) TrackerIntegrationItem {
	pm := c.PriorityMapping
	it := TrackerIntegrationItem{ID: c.ID, Type: support.TrackerIntegrationType, TrackerURL: c.TrackerURL, Username: c.Username,
		APITokenSet: c.APITokenSealed != "", APITokenLast4: c.APITokenLast4, ProjectKey: c.ProjectKey,
		SyncSettings: TrackerSyncSettingsItem{CreateTrackerIssues: c.CreateIssues, SyncComments: c.SyncComments,
			PriorityMapping: TrackerPriorityMappingBody{Critical: pm.Critical, High: pm.High, Medium: pm.Medium, Low: pm.Low}},
		Active: c.Active, CreatedAt: models.Timestamp(c.CreatedAt), UpdatedAt: models.Timestamp(c.UpdatedAt)}
	if c.LastError != "" {
		it.LastError = &c.LastError
	}
	if c.LastErrorAt != nil {
		at := models.Timestamp(*c.LastErrorAt)
		it.LastErrorAt = &at
	}
	return it
}

// TrackerIntegrationOutput wraps one tracker integration.
type TrackerIntegrationOutput struct {
	Status int
	Body   struct {
		Envelope
		Integration TrackerIntegrationItem `json:"integration"`
	}
}

// TrackerIntegrationsOutput lists tracker integrations.
type TrackerIntegrationsOutput struct {
	Body struct {
		Envelope
		Integrations []TrackerIntegrationItem `json:"integrations"`
		Pagination   Pagination               `json:"pagination"`
	}
}

// TrackerTestOutput is the outcome of a connection test.
type TrackerTestOutput struct {
	Body struct {
		Envelope
		Connected  bool   `json:"connected" doc:"The tracker accepted the credentials"`
		StatusCode *int   `json:"status_code" doc:"Its HTTP status; null when no response arrived"`
		Account    string `json:"account,omitempty" doc:"The account the credentials authenticate"`
		Error      string `json:"error,omitempty"`
		LatencyMs  int64  `json:"latency_ms"`
		Endpoint   string `json:"endpoint" example:"GET /rest/api/2/myself"`
	}
}

// TrackerLinkItem is a ticket's issue in the tracker.
type TrackerLinkItem struct {
	TicketID        string  `json:"ticket_id"`
	IssueKey        string  `json:"issue_key" example:"OPS-12"`
	IssueID         string  `json:"issue_id"`
	Priority        string  `json:"priority" doc:"The tracker priority last sent"`
	Status          *string `json:"status" doc:"The issue's status as last read from the tracker"`
	StatusCheckedAt *string `json:"status_checked_at"`
	Adopted         bool    `json:"adopted" doc:"The issue was found by its label after an interrupted creation rather than created by the call that recorded it"`
	CreatedAt       string  `json:"created_at"`
}

// TrackerLinksOutput lists a tracker integration's links.
type TrackerLinksOutput struct {
	Body struct {
		Envelope
		Links      []TrackerLinkItem `json:"links"`
		Pagination Pagination        `json:"pagination"`
	}
}

type trackerPath struct {
	IntegrationID string `path:"integration_id" maxLength:"64" example:"trk_3fK9aZ"`
}

// registerSupportTracker registers the support tracker integrations
// (docs/support.md, "Tracker integration"). Like chat integrations they
// need webhooks:manage and belong to the caller's organization and
// environment.
func (s *Server) registerSupportTracker(tags []string) {
	manage := access{permission: "webhooks:manage"}
	const base = "/support/integrations/tracker"
	register(s, huma.Operation{OperationID: "create-support-tracker-integration", Method: http.MethodPost, Path: base, Summary: "Connect an issue tracker",
		Description: "Connects an issue tracker's Jira-compatible REST API (a `trk_` integration). With create_tracker_issues, each new ticket of the caller's " +
			"organization and environment becomes one issue (its key in the ticket's metadata.vendor_ticket); with sync_comments, customer-visible comments " +
			"are posted to the issue and the issue's comments are added to the ticket. The API token is sealed and never answered. See docs/support.md.",
		Tags: tags, DefaultStatus: http.StatusCreated},
		manage, func(ctx context.Context, in *struct{ Body TrackerIntegrationBody }) (*TrackerIntegrationOutput, error) {
			b := in.Body
			if err := s.subscriptionRules().CheckTrackerURL(ctx, b.TrackerURL); err != nil {
				return nil, err
			}
			spec := support.TrackerSpec{TrackerURL: b.TrackerURL, Username: b.Username, APIToken: b.APIToken, ProjectKey: b.ProjectKey,
				CreateIssues: b.SyncSettings.CreateTrackerIssues, SyncComments: b.SyncSettings.SyncComments,
				PriorityMapping: b.SyncSettings.PriorityMapping.mapping(), Active: b.Active == nil || *b.Active}
			c, err := s.support.CreateTrackerIntegration(ctx, principal(ctx), spec)
			if err != nil {
				return nil, err
			}
			s.startTrackerSync(ctx, c)
			out := &TrackerIntegrationOutput{Status: http.StatusCreated}
			out.Body.Integration = trackerIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-support-tracker-integrations", Method: http.MethodGet, Path: base, Summary: "List tracker integrations", Tags: tags},
		manage, func(ctx context.Context, in *struct{ ListParams }) (*TrackerIntegrationsOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			cs, total, err := s.support.ListTrackerIntegrations(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &TrackerIntegrationsOutput{}
			out.Body.Integrations = make([]TrackerIntegrationItem, len(cs))
			for i := range cs {
				out.Body.Integrations[i] = trackerIntegrationItem(&cs[i])
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-support-tracker-integration", Method: http.MethodGet, Path: base + "/{integration_id}", Summary: "Get a tracker integration", Tags: tags},
		manage, func(ctx context.Context, in *trackerPath) (*TrackerIntegrationOutput, error) {
			c, err := s.support.GetTrackerIntegration(ctx, principal(ctx), in.IntegrationID)
			if err != nil {
				return nil, err
			}
			out := &TrackerIntegrationOutput{Status: http.StatusOK}
			out.Body.Integration = trackerIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-support-tracker-integration", Method: http.MethodPatch, Path: base + "/{integration_id}", Summary: "Change, pause or resume a tracker integration",
		Tags: tags, Description: "Changes the URL, credentials, project or sync settings (validated as on creation); `active: false` pauses it."},
		manage, func(ctx context.Context, in *struct {
			IntegrationID string `path:"integration_id" maxLength:"64" example:"trk_3fK9aZ"`
			Body          TrackerIntegrationPatchBody
		}) (*TrackerIntegrationOutput, error) {
			p := principal(ctx)
			if _, err := s.support.GetTrackerIntegration(ctx, p, in.IntegrationID); err != nil {
				return nil, err
			}
			b := in.Body
			if b.TrackerURL != nil {
				if err := s.subscriptionRules().CheckTrackerURL(ctx, *b.TrackerURL); err != nil {
					return nil, err
				}
			}
			patch := support.TrackerPatch{TrackerURL: b.TrackerURL, Username: b.Username, APIToken: b.APIToken, ProjectKey: b.ProjectKey, Active: b.Active}
			if st := b.SyncSettings; st != nil {
				patch.CreateIssues, patch.SyncComments = st.CreateTrackerIssues, st.SyncComments
				if st.PriorityMapping != nil {
					pm := st.PriorityMapping.mapping()
					patch.PriorityMapping = &pm
				}
			}
			c, err := s.support.UpdateTrackerIntegration(ctx, p, in.IntegrationID, patch)
			if err != nil {
				return nil, err
			}
			s.startTrackerSync(ctx, c)
			out := &TrackerIntegrationOutput{Status: http.StatusOK}
			out.Body.Integration = trackerIntegrationItem(c)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "delete-support-tracker-integration", Method: http.MethodDelete, Path: base + "/{integration_id}", Summary: "Delete a tracker integration",
		Tags: tags, DefaultStatus: http.StatusNoContent, Description: "Its sync stops and its links are forgotten; the issues stay in the tracker and the imported comments on the tickets."},
		manage, func(ctx context.Context, in *trackerPath) (*struct{}, error) {
			return nil, s.support.DeleteTrackerIntegration(ctx, principal(ctx), in.IntegrationID)
		})
	register(s, huma.Operation{OperationID: "test-support-tracker-integration", Method: http.MethodPost, Path: base + "/{integration_id}/test", Summary: "Test a tracker integration's credentials",
		Tags: tags, Description: "Calls the tracker's GET /rest/api/2/myself with the stored credentials now, paused or not, once (at most 10 seconds), and answers the outcome."},
		manage, func(ctx context.Context, in *trackerPath) (*TrackerTestOutput, error) {
			return s.testTrackerIntegration(ctx, in.IntegrationID)
		})
	register(s, huma.Operation{OperationID: "list-support-tracker-integration-links", Method: http.MethodGet, Path: base + "/{integration_id}/links",
		Summary: "List a tracker integration's issues", Tags: tags, Description: "Each ticket's issue, newest first, with the issue status last read from the tracker."},
		manage, func(ctx context.Context, in *struct {
			IntegrationID string `path:"integration_id" maxLength:"64" example:"trk_3fK9aZ"`
			ListParams
		}) (*TrackerLinksOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			ls, total, err := s.support.ListTrackerLinks(ctx, principal(ctx), in.IntegrationID, pr)
			if err != nil {
				return nil, err
			}
			out := &TrackerLinksOutput{}
			out.Body.Links = make([]TrackerLinkItem, len(ls))
			for i := range ls {
				l := &ls[i]
				it := TrackerLinkItem{TicketID: l.TicketID, IssueKey: l.IssueKey, IssueID: l.IssueID, Priority: l.Priority, Adopted: l.Adopted,
					CreatedAt: models.Timestamp(l.CreatedAt)}
				if l.RemoteStatus != "" {
					it.Status = &l.RemoteStatus
				}
				if l.StatusCheckedAt != nil {
					at := models.Timestamp(*l.StatusCheckedAt)
					it.StatusCheckedAt = &at
				}
				out.Body.Links[i] = it
			}
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
}

// startTrackerSync starts (or nudges) an active integration's sync
// workflow; a failure is logged: the next support event of its
// organization starts it too.
func (s *Server) startTrackerSync(ctx context.Context, c *support.TrackerIntegration) {
	if s.temporal == nil || !c.Active {
		return
	}
	in := workflows.TrackerSyncInput{IntegrationID: c.ID, OrganizationID: c.OrganizationID, Environment: c.Environment, PollInterval: s.cfg.TrackerPollInterval}
	if err := events.StartTrackerSync(context.WithoutCancel(ctx), s.temporal, s.cfg.TemporalTaskQueue, in); err != nil {
		s.log.WarnContext(ctx, "the tracker integration's sync did not start; the next support event starts it", "integration_id", c.ID, "error", err)
	}
}

// testTrackerIntegration calls the tracker's myself endpoint with the
// integration's credentials.
func (s *Server) testTrackerIntegration(ctx context.Context, id string) (*TrackerTestOutput, error) {
	c, err := s.support.GetTrackerIntegration(ctx, principal(ctx), id)
	if err != nil {
		return nil, err
	}
	tok, err := s.support.TrackerToken(c)
	if err != nil {
		return nil, err
	}
	hc := webhooks.NewClient(s.cfg.WebhookAllowPrivate, webhooks.WithTimeout(trackerTestTimeout), webhooks.WithTransportWrapper(s.tracing.WrapTransport))
	defer hc.CloseIdleConnections()
	start := time.Now()
	u, err := tracker.NewClient(hc).Myself(ctx, tracker.Credentials{BaseURL: c.TrackerURL, Username: c.Username, APIToken: tok})
	out := &TrackerTestOutput{}
	out.Body.LatencyMs, out.Body.Endpoint = time.Since(start).Milliseconds(), "GET /rest/api/2/myself"
	if err != nil {
		te, _ := err.(*tracker.Error)
		out.Body.Error = err.Error()
		if te != nil && te.Status != 0 {
			code := te.Status
			out.Body.StatusCode = &code
		}
		return out, nil
	}
	code := http.StatusOK
	out.Body.Connected, out.Body.StatusCode = true, &code
	out.Body.Account = u.DisplayName
	if out.Body.Account == "" {
		out.Body.Account = u.Name
	}
	return out, nil
}
