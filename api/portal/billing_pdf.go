package portal

import (
	"bytes"
	"embed"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-pdf/fpdf"
	"github.com/gofiber/fiber/v2"

	"github.com/telcoplatform/platform/models"
)

// An invoice as a document: a PDF (go-pdf/fpdf) or a print-friendly HTML
// page, both from the API's invoice with exact amounts (models.Money).

//go:embed print/*.html
var printFiles embed.FS

// invoiceDoc is an invoice as the documents show it.
type invoiceDoc struct {
	ID          string        `json:"id"`
	Number      string        `json:"number"`
	Status      string        `json:"status"`
	Currency    string        `json:"currency"`
	IssuedAt    string        `json:"issued_at"`
	DueDate     string        `json:"due_date"`
	PaidDate    *string       `json:"paid_date"`
	AccountID   string        `json:"account_id"`
	PeriodStart *string       `json:"period_start"`
	PeriodEnd   *string       `json:"period_end"`
	Notes       string        `json:"notes"`
	Lines       []invoiceLine `json:"services"`
	Subtotal    models.Money  `json:"subtotal"`
	Tax         models.Money  `json:"tax"`
	TaxRate     models.Money  `json:"tax_rate"`
	Amount      models.Money  `json:"amount"`
	AmountPaid  models.Money  `json:"amount_paid"`
	AmountDue   models.Money  `json:"amount_due"`
}

// invoiceLine is one line of an invoice.
type invoiceLine struct {
	ServiceID   string       `json:"service_id"`
	Description string       `json:"description"`
	Quantity    int64        `json:"quantity"`
	UnitPrice   models.Money `json:"unit_price"`
	Amount      models.Money `json:"amount"`
	Kind        string       `json:"kind"`
}

// amount formats money with thousands separators and the currency code.
func amount(m models.Money, currency string) string {
	s := m.String()
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String() + "." + frac + " " + currency
}

// loadInvoice reads the invoice id through the API.
func loadInvoice(r *Request, id string) (*invoiceDoc, error) {
	var out struct {
		Invoice invoiceDoc `json:"invoice"`
	}
	if err := r.API.Do(fiber.MethodGet, "/billing/invoices/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out.Invoice, nil
}

// day is the date part of an RFC 3339 time.
func day(v string) string {
	d, _, _ := strings.Cut(v, "T")
	return d
}

// period is an invoice's billing period ("" without one).
func (d *invoiceDoc) period() string {
	if d.PeriodStart == nil || d.PeriodEnd == nil {
		return ""
	}
	return day(*d.PeriodStart) + " to " + day(*d.PeriodEnd)
}

// invoicePDF answers the invoice as a PDF download.
func (p *Portal) invoicePDF(c *fiber.Ctx, r *Request, id string) error {
	d, err := loadInvoice(r, id)
	if err != nil {
		return err
	}
	raw, err := renderInvoicePDF(d, true)
	if err != nil {
		return models.Internal(err)
	}
	c.Set(fiber.HeaderContentType, "application/pdf")
	c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": d.Number + ".pdf"}))
	c.Set(fiber.HeaderCacheControl, "private, no-store")
	c.Set("X-Content-Type-Options", "nosniff")
	return c.Send(raw)
}

// renderInvoicePDF draws the invoice on an A4 page (compress: deflate the
// page streams, as served; tests read the text uncompressed).
func renderInvoicePDF(d *invoiceDoc, compress bool) ([]byte, error) {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetCompression(compress)
	pdf.SetTitle("Invoice "+d.Number, true)
	pdf.SetAuthor("Telco Platform", true)
	pdf.SetCreator("Telco Platform portal", true)
	tr := pdf.UnicodeTranslatorFromDescriptor("") // cp1252 for the core fonts
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 18)
	pdf.Cell(0, 10, tr("Telco Platform"))
	pdf.Ln(12)
	pdf.SetFont("Helvetica", "B", 14)
	pdf.Cell(0, 8, tr("Invoice "+d.Number))
	pdf.Ln(10)
	pdf.SetFont("Helvetica", "", 10)
	facts := [][2]string{{"Status", d.Status}, {"Issued", day(d.IssuedAt)}, {"Due", day(d.DueDate)}, {"Account", d.AccountID}}
	if per := d.period(); per != "" {
		facts = append(facts, [2]string{"Period", per})
	}
	if d.PaidDate != nil {
		facts = append(facts, [2]string{"Paid", day(*d.PaidDate)})
	}
	for _, f := range facts {
		pdf.CellFormat(30, 6, tr(f[0]), "", 0, "L", false, 0, "")
		pdf.CellFormat(0, 6, tr(f[1]), "", 1, "L", false, 0, "")
	}
	pdf.Ln(4)
	widths := []float64{90, 20, 35, 35}
	pdf.SetFont("Helvetica", "B", 10)
	pdf.SetFillColor(229, 231, 235)
	for i, h := range []string{"Description", "Qty", "Unit price", "Amount"} {
		align := "R"
		if i == 0 {
			align = "L"
		}
		pdf.CellFormat(widths[i], 7, h, "B", 0, align, true, 0, "")
	}
	pdf.Ln(-1)
	pdf.SetFont("Helvetica", "", 10)
	for _, l := range d.Lines {
		desc := l.Description
		if len(desc) > 60 {
			desc = desc[:57] + "..."
		}
		pdf.CellFormat(widths[0], 6, tr(desc), "", 0, "L", false, 0, "")
		pdf.CellFormat(widths[1], 6, fmt.Sprint(l.Quantity), "", 0, "R", false, 0, "")
		pdf.CellFormat(widths[2], 6, amount(l.UnitPrice, d.Currency), "", 0, "R", false, 0, "")
		pdf.CellFormat(widths[3], 6, amount(l.Amount, d.Currency), "", 1, "R", false, 0, "")
	}
	pdf.Ln(2)
	totals := [][2]string{{"Subtotal", amount(d.Subtotal, d.Currency)}, {"Tax (" + d.TaxRate.String() + " %)", amount(d.Tax, d.Currency)},
		{"Total", amount(d.Amount, d.Currency)}, {"Paid", amount(d.AmountPaid, d.Currency)}, {"Amount due", amount(d.AmountDue, d.Currency)}}
	for i, t := range totals {
		style := ""
		if i == 2 || i == 4 {
			style = "B"
		}
		pdf.SetFont("Helvetica", style, 10)
		pdf.CellFormat(widths[0]+widths[1]+widths[2], 6, t[0], "", 0, "R", false, 0, "")
		pdf.CellFormat(widths[3], 6, t[1], "", 1, "R", false, 0, "")
	}
	if d.Notes != "" {
		pdf.Ln(4)
		pdf.SetFont("Helvetica", "", 9)
		pdf.MultiCell(0, 5, tr(d.Notes), "", "L", false)
	}
	var b bytes.Buffer
	if err := pdf.Output(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// printDoc is the data of the print-friendly invoice.
type printDoc struct {
	*invoiceDoc
	Money  func(models.Money) string
	Period string
}

// invoicePrint answers the invoice as a standalone, print-friendly HTML
// document (a download with ?download=1).
func (p *Portal) invoicePrint(c *fiber.Ctx, r *Request, id string) error {
	d, err := loadInvoice(r, id)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	data := printDoc{invoiceDoc: d, Period: d.period(), Money: func(m models.Money) string { return amount(m, d.Currency) }}
	if err := p.pages.invoicePrint.Execute(&b, data); err != nil {
		return models.Internal(err)
	}
	setHeaders(c)
	if c.Query("download") != "" {
		c.Set(fiber.HeaderContentDisposition, mime.FormatMediaType("attachment", map[string]string{"filename": d.Number + ".html"}))
	}
	c.Type("html", "utf-8")
	return c.Status(http.StatusOK).Send(b.Bytes())
}
