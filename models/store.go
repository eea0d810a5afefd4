package models

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Store holds the database and the helpers every domain operation needs.
// Domain rules live in its methods; handlers and activities call them.
type Store struct {
	DB     *gorm.DB
	Sealer *Sealer
	Now    func() time.Time
	// ComparePassword compares a password with its bcrypt hash (nil:
	// bcrypt.CompareHashAndPassword); tests count the comparisons with it.
	ComparePassword func(hash, password []byte) error
	// Observer is told of the transitions that metrics count (nil: none);
	// main sets it to the process's metrics.
	Observer Observer
	// Memo keeps reference data read from the database for a while (see
	// Kept); shared with the store's copies.
	Memo *Memo
}

// Observer receives the domain transitions that metrics count.
type Observer interface {
	// OperationStatusChanged reports an operation of opType going from
	// status from to status to (once its change is written).
	OperationStatusChanged(opType, from, to string)
}

// NewStore returns a Store on db that seals secrets with sealer.
func NewStore(db *gorm.DB, sealer *Sealer) *Store {
	return &Store{DB: db, Sealer: sealer, Now: func() time.Time { return time.Now().UTC() }, Memo: NewMemo(nil)}
}

// In returns the database bound to ctx and scope (see Scoped).
func (s *Store) In(ctx context.Context, scope Scope) *gorm.DB {
	return Scoped(ctx, s.DB, scope)
}

// Bound returns a copy of s whose database is tx: its In and Tx run on
// the transaction's connection (Tx as a savepoint). Code that holds a
// transaction and calls other store methods uses it, so that a
// transaction never waits for a second connection of the pool while it
// holds one (a pool of n connections would deadlock under n such
// transactions at once).
func (s *Store) Bound(tx *gorm.DB) *Store {
	c := *s
	c.DB = tx
	return &c
}

// Tx runs fn in one database transaction bound to ctx and scope.
func (s *Store) Tx(ctx context.Context, scope Scope, fn func(tx *gorm.DB) error) error {
	return s.In(ctx, scope).Transaction(fn)
}

// NotFoundOr maps gorm's record-not-found to NOT_FOUND for what, and any
// other failure to an internal error.
func NotFoundOr(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return NotFound(what)
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

// dbErr wraps a database failure as an internal error (nil stays nil).
func DBErr(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

// IsUniqueViolation reports whether err is a unique-constraint violation,
// on SQLite or PostgreSQL.
func IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

func isUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if err == gorm.ErrDuplicatedKey {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || strings.Contains(msg, "duplicate key value") || strings.Contains(msg, "SQLSTATE 23505")
}
