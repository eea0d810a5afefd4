// Package gql is the platform's read-only GraphQL graph (POST /v1/graphql):
// the schema (schema.graphqls, embedded), gqlgen's generated executor and
// types, hand-written resolvers that read through the domain stores with
// the caller's principal (the same tenancy and permissions as the REST
// API), per-request batched loaders for nested lists, and the depth and
// complexity limits.
package gql

//go:generate go run github.com/99designs/gqlgen@v0.17.98 generate --config gqlgen.yml
