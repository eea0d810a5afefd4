package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/identity"
)

// UserItem is a user as answered.
type UserItem struct {
	ID             string `json:"id" example:"usr_3fK9aZ"`
	OrganizationID string `json:"organization_id"`
	Email          string `json:"email"`
	Name           string `json:"name"`
	Role           string `json:"role" enum:"customer,agent,admin"`
	CreatedAt      string `json:"created_at"`
	// IPAllowList is where the user's access tokens may be used from (empty: anywhere).
	IPAllowList []string `json:"ip_allowlist"`
	// Permissions are what the user's sessions and tokens may carry.
	Permissions []string `json:"permissions" doc:"what the user's sessions and access tokens may carry: the role's permissions, narrowed by the list given at creation or by PATCH"`
}

func userItem(u *identity.User) UserItem {
	return UserItem{ID: u.ID, OrganizationID: u.OrganizationID, Email: u.Email, Name: u.Name, Role: string(u.Role), CreatedAt: models.Timestamp(u.CreatedAt),
		IPAllowList: nonNil(u.IPAllowList), Permissions: nonNil(u.SessionPermissions())}
}

// UserPatchBody is a change to a user: absent fields are kept.
type UserPatchBody struct {
	Name        *string   `json:"name,omitempty" maxLength:"200"`
	IPAllowList *[]string `json:"ip_allowlist,omitempty" doc:"IP addresses or CIDR ranges (at most 100) the user's access tokens may be used from; [] removes the allow-list"`
	Role        *string   `json:"role,omitempty" enum:"customer,agent,admin" doc:"provider administrators only; staff roles exist only in the provider's organization"`
	Permissions *[]string `json:"permissions,omitempty" maxItems:"20" doc:"replaces what the user's sessions may carry (each must be among the role's and held by the caller); [] leaves none"`
}

// UserOutput wraps one user.
type UserOutput struct {
	Status int
	Body   struct {
		Envelope
		User UserItem `json:"user"`
	}
}

// UsersOutput is a page of users.
type UsersOutput struct {
	Body struct {
		Envelope
		Users      []UserItem `json:"users"`
		Pagination Pagination `json:"pagination"`
	}
}

// MeOutput describes the caller.
type MeOutput struct {
	Body struct {
		Envelope
		Principal struct {
			Type           string    `json:"type" enum:"api_key,user,oauth_client,certificate"`
			ID             string    `json:"id"`
			OrganizationID string    `json:"organization_id"`
			Environment    string    `json:"environment" enum:"live,test"`
			Role           string    `json:"role"`
			Permissions    []string  `json:"permissions"`
			User           *UserItem `json:"user,omitempty"`
		} `json:"principal"`
	}
}

func (s *Server) registerUsers() {
	tags := []string{"Administration"}
	register(s, huma.Operation{OperationID: "create-user", Method: http.MethodPost, Path: "/users", Summary: "Create a user", Tags: tags, DefaultStatus: http.StatusCreated,
		Description: "Creates a person who signs in (portal password, SAML, OAuth, device flow). A user is a credential of its own: the caller must hold every permission the user's sessions will carry (`permissions`, by default all of the role's), users act in both environments so a sandbox (sk_test_) credential creates none, and users signed in with a second factor are challenged."},
		access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *struct {
			Body struct {
				Email          string   `json:"email" maxLength:"320" format:"email" example:"jane@example.com"`
				Name           string   `json:"name" maxLength:"200" example:"Jane Doe"`
				Role           string   `json:"role,omitempty" enum:"customer,agent,admin"`
				OrganizationID string   `json:"organization_id,omitempty" maxLength:"64"`
				Password       string   `json:"password,omitempty" maxLength:"72" doc:"12 to 72 characters; omit for SAML-only users"`
				IPAllowList    []string `json:"ip_allowlist,omitempty" maxItems:"100" doc:"IP addresses or CIDR ranges the user's access tokens may be used from (default: anywhere)"`
				Permissions    []string `json:"permissions,omitempty" maxItems:"20" doc:"what the user's sessions and tokens may carry (default: every permission of the role); the caller must hold each of them"`
			}
		}) (*UserOutput, error) {
			u, err := s.identity.CreateUser(ctx, principal(ctx), identity.UserInput{Email: in.Body.Email, Name: in.Body.Name, Role: models.Role(in.Body.Role), OrganizationID: in.Body.OrganizationID, Password: in.Body.Password,
				IPAllowList: in.Body.IPAllowList, Permissions: in.Body.Permissions})
			if err != nil {
				return nil, err
			}
			out := &UserOutput{Status: http.StatusCreated}
			out.Body.User = userItem(u)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "list-users", Method: http.MethodGet, Path: "/users", Summary: "List users", Tags: tags},
		access{permission: "auth:manage"}, func(ctx context.Context, in *struct{ ListParams }) (*UsersOutput, error) {
			pr, err := in.page()
			if err != nil {
				return nil, err
			}
			users, total, err := s.identity.ListUsers(ctx, principal(ctx), pr)
			if err != nil {
				return nil, err
			}
			out := &UsersOutput{}
			out.Body.Users = mapSlice(users, userItem)
			out.Body.Pagination = newPagination(pr, total)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "update-user", Method: http.MethodPatch, Path: "/users/{user_id}", Summary: "Update a user",
		Description: "Changes a user's name, IP allow-list, role or permissions. Provider administrators change any user; other callers the customer users of their own organization, with a live credential (users act in both environments). The caller must hold every permission the user has and every permission it grants; only administrators change roles. An allow-list that excludes the request's own address is refused when users change their own. Users signed in with a second factor are challenged.",
		Tags:        tags},
		access{permission: "auth:manage", mfa: true}, func(ctx context.Context, in *struct {
			ID   string `path:"user_id" maxLength:"64"`
			Body UserPatchBody
		}) (*UserOutput, error) {
			u, err := s.identity.UpdateUser(ctx, principal(ctx), in.ID, identity.UserUpdate{Name: in.Body.Name, IPAllowList: in.Body.IPAllowList, Role: (*models.Role)(in.Body.Role), Permissions: in.Body.Permissions, Origin: s.requestOrigin(ctx)})
			if err != nil {
				return nil, err
			}
			out := &UserOutput{Status: http.StatusOK}
			out.Body.User = userItem(u)
			return out, nil
		})
	register(s, huma.Operation{OperationID: "get-me", Method: http.MethodGet, Path: "/users/me", Summary: "Who am I", Tags: tags},
		access{}, func(ctx context.Context, _ *struct{}) (*MeOutput, error) {
			p := principal(ctx)
			out := &MeOutput{}
			me := &out.Body.Principal
			me.Type, me.ID, me.OrganizationID, me.Environment, me.Role, me.Permissions = string(p.Kind), p.ID, p.OrganizationID, string(p.Environment), string(p.Role), nonNil(p.Permissions)
			if p.UserID != "" {
				if u, err := s.identity.GetUser(ctx, p, p.UserID); err == nil {
					item := userItem(u)
					me.User = &item
				}
			}
			return out, nil
		})
}
