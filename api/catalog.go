package api

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/telcoplatform/platform/models"
	"github.com/telcoplatform/platform/models/catalog"
)

// CatalogPricing is the price of a catalog offer.
type CatalogPricing struct {
	StartingPrice models.Money `json:"starting_price" example:"299.00"`
	Unit          string       `json:"unit" example:"month"`
	Currency      string       `json:"currency" example:"USD"`
}

// CatalogServiceItem is one offer of the catalog.
type CatalogServiceItem struct {
	ID               string         `json:"id" example:"internet-fiber-dedicated"`
	Name             string         `json:"name"`
	Description      string         `json:"description"`
	Kind             string         `json:"kind" example:"internet"`
	BandwidthOptions []string       `json:"bandwidth_options"`
	SLAOptions       []string       `json:"sla_options"`
	Pricing          CatalogPricing `json:"pricing"`
}

// CatalogCategoryItem is one category of the catalog with its services.
type CatalogCategoryItem struct {
	Name        string               `json:"name" example:"connectivity"`
	Title       string               `json:"title" example:"Connectivity"`
	Description string               `json:"description"`
	Services    []CatalogServiceItem `json:"services"`
}

// CatalogOutput is the catalog response.
type CatalogOutput struct {
	Body struct {
		Envelope
		Categories []CatalogCategoryItem `json:"categories"`
		preEncoded                       // encoded once per build of the catalog (catalogCache)
	}
}

// CatalogCategoryOutput is one category of the catalog.
type CatalogCategoryOutput struct {
	Body struct {
		Envelope
		Category CatalogCategoryItem `json:"category"`
	}
}

func catalogItem(e *catalog.CatalogEntry) CatalogCategoryItem {
	return CatalogCategoryItem{
		Name: e.Category.Name, Title: e.Category.Title, Description: e.Category.Description,
		Services: mapSlice(e.Services, func(s *catalog.CatalogService) CatalogServiceItem {
			return CatalogServiceItem{
				ID: s.ID, Name: s.Name, Description: s.Description, Kind: s.Kind,
				BandwidthOptions: nonNil(s.BandwidthOptions), SLAOptions: nonNil(s.SLAOptions),
				Pricing: CatalogPricing{StartingPrice: s.StartingPrice, Unit: s.Unit, Currency: s.Currency},
			}
		}),
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (s *Server) registerCatalog() {
	tags := []string{"Services: catalog"}
	register(s, huma.Operation{OperationID: "get-catalog", Method: http.MethodGet, Path: "/services/catalog", Summary: "Service catalog", Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, _ *struct{}) (*CatalogOutput, error) {
			answer, err := s.catalogAnswer.get(ctx, func(ctx context.Context) (*CatalogOutput, error) {
				entries, err := s.catalog.Catalog(ctx)
				if err != nil {
					return nil, err
				}
				out := &CatalogOutput{}
				out.Body.Categories = mapSlice(entries, catalogItem)
				enc, err := encodeInAdvance(&out.Body)
				if err != nil {
					return nil, err
				}
				out.Body.preEncoded = enc
				return out, nil
			})
			if err != nil {
				return nil, err
			}
			out := *answer // a copy: the envelope transformer fills its metadata
			return &out, nil
		})
	register(s, huma.Operation{OperationID: "get-catalog-category", Method: http.MethodGet, Path: "/services/catalog/{category}", Summary: "One catalog category", Tags: tags},
		access{permission: "services:read"}, func(ctx context.Context, in *struct {
			Category string `path:"category" maxLength:"40" example:"connectivity"`
		}) (*CatalogCategoryOutput, error) {
			entry, err := s.catalog.CatalogCategoryEntry(ctx, in.Category)
			if err != nil {
				return nil, err
			}
			out := &CatalogCategoryOutput{}
			out.Body.Category = catalogItem(entry)
			return out, nil
		})
}
