package models

import (
	"context"
	"errors"
	"reflect"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Environment is the data partition a credential acts on: live data or the sandbox.
type Environment string

// Environments: sk_live_ keys act on live, sk_test_ keys on test (the sandbox).
const (
	EnvLive Environment = "live"
	EnvTest Environment = "test"
)

// Valid reports whether e is live or test.
func (e Environment) Valid() bool { return e == EnvLive || e == EnvTest }

// Tenant is embedded in every row that belongs to one organization and one
// environment. The store fills and filters these columns from the caller's
// Scope; a query on such a table without a Scope fails.
type Tenant struct {
	OrganizationID string      `gorm:"size:40;not null;index" json:"-"`
	Environment    Environment `gorm:"size:8;not null;index" json:"-"`
}

// Scope says which rows a caller may see. System scopes (workers, migrations,
// seed, credential lookup) see everything; staff scopes see every organization
// of one environment; tenant scopes see one organization and environment.
type Scope struct {
	OrganizationID   string
	Environment      Environment
	AllOrganizations bool
	System           bool
}

// SystemScope returns the scope of internal work that is not done for a caller.
func SystemScope() Scope { return Scope{System: true} }

// TenantScope returns the scope of one organization and environment.
func TenantScope(orgID string, env Environment) Scope {
	return Scope{OrganizationID: orgID, Environment: env}
}

// ErrUnscoped is returned by any query on a tenant table made without a Scope.
var ErrUnscoped = errors.New("query on a tenant table without a tenant scope")

// ErrWrongTenant is returned when a row being written belongs to another tenant than the scope.
var ErrWrongTenant = errors.New("row written outside the caller's tenant scope")

type scopeKey struct{}

// Scoped returns db bound to ctx and scope: every query, update and delete on
// a table with organization_id (and environment) is filtered by it, and every
// insert is stamped with it. The scope travels in the statement's context, so
// it survives every chained call and transaction.
func Scoped(ctx context.Context, db *gorm.DB, scope Scope) *gorm.DB {
	if tx, ok := ctx.Value(txKey{}).(*gorm.DB); ok && tx != nil && !inTransaction(db) {
		db = tx
	}
	return db.WithContext(context.WithValue(ctx, scopeKey{}, scope))
}

type txKey struct{}

// WithTx returns ctx carrying the open transaction tx: every query made
// through Scoped with ctx (so every Store.In and Store.Tx, a Tx then being
// a savepoint) runs in tx instead of on the pool, unless it is already
// made on a transaction. It lets one transaction span several requests
// served in process (the atomic batches of api/batch.go); tx is used by one
// goroutine at a time.
func WithTx(ctx context.Context, tx *gorm.DB) context.Context {
	return context.WithValue(ctx, txKey{}, tx)
}

// inTransaction reports whether db runs on a transaction's connection.
func inTransaction(db *gorm.DB) bool {
	committer, ok := db.Statement.ConnPool.(gorm.TxCommitter)
	return ok && committer != nil
}

// registerTenantCallbacks installs the callbacks that enforce tenant scoping.
func registerTenantCallbacks(db *gorm.DB) error {
	cb := db.Callback()
	if err := cb.Query().Before("gorm:query").Register("platform:tenant_query", filterTenant); err != nil {
		return err
	}
	if err := cb.Row().Before("gorm:row").Register("platform:tenant_row", filterTenant); err != nil {
		return err
	}
	if err := cb.Update().Before("gorm:update").Register("platform:tenant_update", filterTenant); err != nil {
		return err
	}
	if err := cb.Delete().Before("gorm:delete").Register("platform:tenant_delete", filterTenant); err != nil {
		return err
	}
	return cb.Create().Before("gorm:create").Register("platform:tenant_create", stampTenant)
}

func scopeOf(db *gorm.DB) (Scope, bool) {
	if db.Statement.Context == nil {
		return Scope{}, false
	}
	s, ok := db.Statement.Context.Value(scopeKey{}).(Scope)
	return s, ok
}

func tenantColumns(db *gorm.DB) (org, env bool) {
	if db.Statement.Schema == nil {
		return false, false
	}
	_, org = db.Statement.Schema.FieldsByDBName["organization_id"]
	_, env = db.Statement.Schema.FieldsByDBName["environment"]
	return org, env
}

func filterTenant(db *gorm.DB) {
	hasOrg, hasEnv := tenantColumns(db)
	if !hasOrg {
		return
	}
	scope, ok := scopeOf(db)
	if !ok {
		_ = db.AddError(ErrUnscoped)
		return
	}
	if scope.System {
		return
	}
	var exprs []clause.Expression
	if !scope.AllOrganizations {
		exprs = append(exprs, clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "organization_id"}, Value: scope.OrganizationID})
	}
	if hasEnv && scope.Environment != "" {
		exprs = append(exprs, clause.Eq{Column: clause.Column{Table: clause.CurrentTable, Name: "environment"}, Value: scope.Environment})
	}
	if len(exprs) > 0 {
		db.Statement.AddClause(clause.Where{Exprs: exprs})
	}
}

func stampTenant(db *gorm.DB) {
	hasOrg, hasEnv := tenantColumns(db)
	if !hasOrg {
		return
	}
	scope, ok := scopeOf(db)
	if !ok {
		_ = db.AddError(ErrUnscoped)
		return
	}
	orgField := db.Statement.Schema.FieldsByDBName["organization_id"]
	envField := db.Statement.Schema.FieldsByDBName["environment"]
	ctx := db.Statement.Context
	check := func(rv reflect.Value) {
		for rv.Kind() == reflect.Pointer {
			rv = rv.Elem()
		}
		if rv.Kind() != reflect.Struct {
			return
		}
		org, orgZero := orgField.ValueOf(ctx, rv)
		if orgZero {
			if scope.System || scope.AllOrganizations {
				_ = db.AddError(ErrWrongTenant)
				return
			}
			_ = orgField.Set(ctx, rv, scope.OrganizationID)
		} else if !scope.System && !scope.AllOrganizations && org != scope.OrganizationID {
			_ = db.AddError(ErrWrongTenant)
			return
		}
		if hasEnv {
			env, envZero := envField.ValueOf(ctx, rv)
			switch {
			case envZero && scope.Environment != "":
				_ = envField.Set(ctx, rv, scope.Environment)
			case envZero:
				_ = db.AddError(ErrWrongTenant)
			case scope.Environment != "" && !scope.System && env != scope.Environment:
				_ = db.AddError(ErrWrongTenant)
			}
		}
	}
	rv := db.Statement.ReflectValue
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			check(rv.Index(i))
		}
	default:
		check(rv)
	}
}
