package models

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// DatabaseUnavailableRetry is the Retry-After, in seconds, of an answer
// refused because the database cannot be reached.
const DatabaseUnavailableRetry = 2

// DatabaseUnavailableError is the answer to a request that failed because
// the database cannot be reached (DatabaseUnavailable(cause)): a temporary
// DEPENDENCY_UNAVAILABLE with retry_after, not an internal error.
func DatabaseUnavailableError(cause error) *Error {
	e := Errorf(CodeDependencyUnavailable, "the database is unavailable right now; retry shortly").
		WithDetail("retry_after", DatabaseUnavailableRetry)
	e.Cause = cause
	return e
}

// AnswerError is the error a request that failed with err is answered
// with: e (err as an *Error), or DatabaseUnavailableError when e is an
// internal error because the database cannot be reached. The REST answers
// and GraphQL's field errors both go through it.
func AnswerError(e *Error, err error) *Error {
	if e.Code == CodeInternal && DatabaseUnavailable(err) {
		return DatabaseUnavailableError(err)
	}
	return e
}

// DatabaseUnavailable reports whether err says that the database cannot be
// reached right now, rather than that the request or the code is wrong: a
// refused or broken connection, a server shutting down or starting up
// (SQLSTATE class 08, 57P01 to 57P03), too many connections (53300). Such
// a failure is temporary; the API answers it with 503
// DEPENDENCY_UNAVAILABLE and Retry-After instead of 500.
func DatabaseUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	var connectErr *pgconn.ConnectError
	var netErr *net.OpError
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return pgconn.SafeToRetry(err)
}
