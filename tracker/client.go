// Package tracker is the client of an issue tracker's Jira-compatible REST
// API (version 2) that the support tracker integration calls: who am I,
// search by JQL, create an issue, read its status, list and add comments,
// change its priority. Every request goes through the SSRF-guarded HTTP
// client of package webhooks, with basic authentication.
package tracker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/webhooks"
)

// maxBody bounds how much of a tracker's answer is read.
const maxBody = 4 << 20

// Credentials say where a tracker is and who calls it.
type Credentials struct {
	BaseURL  string // the tracker's base URL, without /rest/api/2
	Username string
	APIToken string
}

// Error is a failed call: the tracker's HTTP status (0 when no answer
// arrived) and a short message without secrets.
type Error struct {
	Status  int
	Message string
}

// Error implements error.
func (e *Error) Error() string {
	if e.Status == 0 {
		return e.Message
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Retryable reports whether trying again may succeed: no answer, a 5xx,
// 408 or 429. Any other 4xx (bad credentials, unknown project) stays.
func (e *Error) Retryable() bool {
	return e.Status == 0 || e.Status >= 500 || e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout
}

// IsRetryable reports whether err is worth retrying (a non-*Error is).
func IsRetryable(err error) bool {
	var te *Error
	if errors.As(err, &te) {
		return te.Retryable()
	}
	return true
}

// Client calls trackers. It is safe for concurrent use.
type Client struct {
	http *webhooks.Client
}

// NewClient returns a Client that sends its requests through hc.
func NewClient(hc *webhooks.Client) *Client { return &Client{http: hc} }

// User is the account the credentials authenticate.
type User struct {
	Name         string `json:"name"`
	AccountID    string `json:"accountId"`
	DisplayName  string `json:"displayName"`
	EmailAddress string `json:"emailAddress"`
}

// Issue is an issue as the calls below read it.
type Issue struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Fields struct {
		Status *struct {
			Name string `json:"name"`
		} `json:"status,omitempty"`
		Labels []string `json:"labels,omitempty"`
	} `json:"fields"`
}

// Status returns the issue's status name ("" when not read).
func (i *Issue) Status() string {
	if i.Fields.Status == nil {
		return ""
	}
	return i.Fields.Status.Name
}

// NewIssue is what CreateIssue sends.
type NewIssue struct {
	ProjectKey  string
	Summary     string
	Description string
	IssueType   string // default Task
	Priority    string // "" sends none
	Labels      []string
}

// Comment is a comment of an issue.
type Comment struct {
	ID     string `json:"id"`
	Body   string `json:"body"`
	Author struct {
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
	} `json:"author"`
	Created string `json:"created"`
}

// AuthorName is the comment author's display name (or account name).
func (c *Comment) AuthorName() string {
	if c.Author.DisplayName != "" {
		return c.Author.DisplayName
	}
	return c.Author.Name
}

// Myself returns the account the credentials authenticate
// (GET /rest/api/2/myself).
func (c *Client) Myself(ctx context.Context, cr Credentials) (*User, error) {
	var u User
	return &u, c.call(ctx, cr, http.MethodGet, "/rest/api/2/myself", nil, &u)
}

// SearchLabel returns the issues of project carrying label, at most two
// (POST /rest/api/2/search with JQL `project = "P" AND labels = "label"`).
func (c *Client) SearchLabel(ctx context.Context, cr Credentials, project, label string) ([]Issue, error) {
	body := map[string]any{"jql": fmt.Sprintf("project = %s AND labels = %s", jqlString(project), jqlString(label)),
		"fields": []string{"status", "labels"}, "maxResults": 2}
	var out struct {
		Issues []Issue `json:"issues"`
	}
	if err := c.call(ctx, cr, http.MethodPost, "/rest/api/2/search", body, &out); err != nil {
		return nil, err
	}
	return out.Issues, nil
}

// jqlString quotes s as a JQL string.
func jqlString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// CreateIssue creates an issue (POST /rest/api/2/issue) and returns its id
// and key.
func (c *Client) CreateIssue(ctx context.Context, cr Credentials, in NewIssue) (*Issue, error) {
	if in.IssueType == "" {
		in.IssueType = "Task"
	}
	fields := map[string]any{"project": map[string]string{"key": in.ProjectKey}, "summary": in.Summary, "description": in.Description,
		"issuetype": map[string]string{"name": in.IssueType}, "labels": in.Labels}
	if in.Priority != "" {
		fields["priority"] = map[string]string{"name": in.Priority}
	}
	var out Issue
	if err := c.call(ctx, cr, http.MethodPost, "/rest/api/2/issue", map[string]any{"fields": fields}, &out); err != nil {
		return nil, err
	}
	if out.Key == "" {
		return nil, &Error{Status: http.StatusOK, Message: "the tracker answered no issue key"}
	}
	return &out, nil
}

// GetIssue reads an issue's status (GET /rest/api/2/issue/{key}?fields=status).
func (c *Client) GetIssue(ctx context.Context, cr Credentials, key string) (*Issue, error) {
	var out Issue
	return &out, c.call(ctx, cr, http.MethodGet, "/rest/api/2/issue/"+url.PathEscape(key)+"?fields=status", nil, &out)
}

// SetPriority changes an issue's priority (PUT /rest/api/2/issue/{key}).
func (c *Client) SetPriority(ctx context.Context, cr Credentials, key, priority string) error {
	body := map[string]any{"fields": map[string]any{"priority": map[string]string{"name": priority}}}
	return c.call(ctx, cr, http.MethodPut, "/rest/api/2/issue/"+url.PathEscape(key), body, nil)
}

// Comments lists an issue's comments, oldest first, at most max, page by
// page (GET /rest/api/2/issue/{key}/comment?startAt=…).
func (c *Client) Comments(ctx context.Context, cr Credentials, key string, max int) ([]Comment, error) {
	var all []Comment
	for len(all) < max {
		var page struct {
			Total    int       `json:"total"`
			Comments []Comment `json:"comments"`
		}
		path := fmt.Sprintf("/rest/api/2/issue/%s/comment?orderBy=created&startAt=%d&maxResults=%d", url.PathEscape(key), len(all), min(100, max-len(all)))
		if err := c.call(ctx, cr, http.MethodGet, path, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Comments...)
		if len(page.Comments) == 0 || len(all) >= page.Total {
			break
		}
	}
	return all, nil
}

// AddComment adds a comment to an issue (POST /rest/api/2/issue/{key}/comment).
func (c *Client) AddComment(ctx context.Context, cr Credentials, key, body string) (*Comment, error) {
	var out Comment
	if err := c.call(ctx, cr, http.MethodPost, "/rest/api/2/issue/"+url.PathEscape(key)+"/comment", map[string]string{"body": body}, &out); err != nil {
		return nil, err
	}
	if out.ID == "" {
		return nil, &Error{Status: http.StatusOK, Message: "the tracker answered no comment id"}
	}
	return &out, nil
}

// call sends one request with basic authentication and decodes a 2xx JSON
// answer into out (when not nil). Errors: *Error.
func (c *Client) call(ctx context.Context, cr Credentials, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return &Error{Message: "encoding the request failed"}
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(cr.BaseURL, "/")+path, r)
	if err != nil {
		return &Error{Message: "the tracker URL is not usable"}
	}
	req.SetBasicAuth(cr.Username, cr.APIToken)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(ctx, req)
	if err != nil {
		return &Error{Message: c.http.Describe(err)}
	}
	defer func() { _ = res.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return &Error{Message: "reading the answer failed: " + err.Error()}
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return &Error{Status: res.StatusCode, Message: remoteMessage(res.StatusCode, raw)}
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Status: res.StatusCode, Message: "the answer is not the expected JSON"}
	}
	return nil
}

// remoteMessage summarises an error answer: the tracker's errorMessages
// and errors when it sent them, else the status text.
func remoteMessage(status int, raw []byte) string {
	var e struct {
		ErrorMessages []string          `json:"errorMessages"`
		Errors        map[string]string `json:"errors"`
	}
	var parts []string
	if json.Unmarshal(raw, &e) == nil {
		parts = append(parts, e.ErrorMessages...)
		for k, v := range e.Errors {
			parts = append(parts, k+": "+v)
		}
	}
	msg := strings.Join(parts, "; ")
	if msg == "" {
		msg = http.StatusText(status)
	}
	return models.Truncate(msg, 300)
}
