package services

import (
	"fmt"
	"slices"
	"strings"
)

// AIModel is a model an AI platform serves (spec 2.1).
type AIModel struct {
	Name      string `json:"name" required:"true" pattern:"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$" maxLength:"100" example:"churn-predictor" doc:"Required: letters, digits, dots, dashes, underscores"`
	Type      string `json:"type" required:"true" enum:"classification,regression,forecasting,clustering,recommendation,language_model,embedding,object_detection,image_classification,anomaly_detection" maxLength:"30" example:"classification" doc:"Required: classification, regression, forecasting, clustering, recommendation, language_model, embedding, object_detection, image_classification or anomaly_detection"`
	Framework string `json:"framework" required:"true" enum:"pytorch,tensorflow,scikit_learn,xgboost,onnx,huggingface,jax" maxLength:"30" example:"pytorch" doc:"Required: pytorch, tensorflow, scikit_learn, xgboost, onnx, huggingface or jax"`
}

// AIPlatformBody is the AI platform create body (spec 2.1).
type AIPlatformBody struct {
	AccountID    string    `json:"account_id,omitempty" maxLength:"64" doc:"Billing account; default: the organization's oldest"`
	PlatformType string    `json:"platform_type" required:"true" enum:"enterprise_ai,machine_learning,inference,mlops" maxLength:"30" example:"enterprise_ai" doc:"Required: enterprise_ai, machine_learning, inference or mlops"`
	Capabilities []string  `json:"capabilities" required:"true" minItems:"1" enum:"natural_language_processing,computer_vision,predictive_analytics,recommendation_engine" example:"[\"natural_language_processing\"]" maxItems:"4" doc:"Required: natural_language_processing, computer_vision, predictive_analytics, recommendation_engine"`
	ComputeTier  string    `json:"compute_tier" required:"true" enum:"cpu_standard,gpu_optimized,gpu_high_memory" maxLength:"30" example:"gpu_optimized" doc:"Required: cpu_standard, gpu_optimized or gpu_high_memory"`
	DataSources  []string  `json:"data_sources,omitempty" maxItems:"20" doc:"Names or addresses of the data sources, at most 200 characters each"`
	Models       []AIModel `json:"models,omitempty" maxItems:"20" doc:"Models to serve, unique names"`
	Region       string    `json:"region,omitempty" maxLength:"30" doc:"A region id; default us-east-1"`
	SLA          string    `json:"sla,omitempty" enum:"standard,premium,enterprise" maxLength:"20" doc:"standard, premium or enterprise; default standard"`
	OrderExtras
}

// ServiceKind returns ai_platform.
func (b *AIPlatformBody) ServiceKind() string { return KindAIPlatform }

var (
	aiPlatformTypes = []string{"enterprise_ai", "machine_learning", "inference", "mlops"}
	aiCapabilities  = []string{"natural_language_processing", "computer_vision", "predictive_analytics", "recommendation_engine"}
	computeTiers    = []string{"cpu_standard", "gpu_optimized", "gpu_high_memory"}
	aiModelTypes    = []string{"classification", "regression", "forecasting", "clustering", "recommendation", "language_model", "embedding", "object_detection", "image_classification", "anomaly_detection"}
	aiFrameworks    = []string{"pytorch", "tensorflow", "scikit_learn", "xgboost", "onnx", "huggingface", "jax"}
)

func (b *AIPlatformBody) prepare(p *orderPrep, o *ProvisioningOrder) error {
	v := p.v
	b.OrderExtras.apply(o)
	o.AccountID, o.SLA = strings.TrimSpace(b.AccountID), strings.TrimSpace(b.SLA)
	o.ServiceType = strings.TrimSpace(b.PlatformType)
	if p.required(o.ServiceType != "", "platform_type") {
		v.Check(slices.Contains(aiPlatformTypes, o.ServiceType), "platform_type", "must be one of "+strings.Join(aiPlatformTypes, ", "))
	} else {
		o.ServiceType = "enterprise_ai"
	}
	var caps []string
	if p.required(len(b.Capabilities) > 0, "capabilities") {
		caps = CheckList(v, "capabilities", b.Capabilities, aiCapabilities, 1, 4)
	}
	tier := strings.TrimSpace(b.ComputeTier)
	if p.required(tier != "", "compute_tier") {
		v.Check(slices.Contains(computeTiers, tier), "compute_tier", "must be one of "+strings.Join(computeTiers, ", "))
	} else {
		tier = "cpu_standard"
	}
	if slices.Contains(caps, "computer_vision") && tier == "cpu_standard" {
		v.Add("compute_tier", "computer_vision needs a GPU tier: gpu_optimized or gpu_high_memory")
	}
	if len(b.DataSources) > 20 {
		v.Add("data_sources", "must list at most 20 sources")
	}
	for i, d := range b.DataSources {
		d = strings.TrimSpace(d)
		v.Check(d != "" && len(d) <= 200 && !strings.ContainsFunc(d, func(r rune) bool { return r < 0x20 }), fmt.Sprintf("data_sources[%d]", i), "must be 1 to 200 printable characters")
	}
	var names []string
	for i, m := range b.Models {
		f := fmt.Sprintf("models[%d]", i)
		switch {
		case !svcModelPattern.MatchString(m.Name):
			v.Add(f+".name", "is required: letters, digits, dots, dashes and underscores, at most 100")
		case slices.Contains(names, m.Name):
			v.Add(f+".name", fmt.Sprintf("%q is listed twice", m.Name))
		default:
			names = append(names, m.Name)
		}
		v.Check(slices.Contains(aiModelTypes, m.Type), f+".type", "must be one of "+strings.Join(aiModelTypes, ", "))
		v.Check(slices.Contains(aiFrameworks, strings.ReplaceAll(m.Framework, "-", "_")), f+".framework", "must be one of "+strings.Join(aiFrameworks, ", "))
	}
	region := "us-east-1"
	if strings.TrimSpace(b.Region) != "" {
		if r := p.checkRegions("region", []string{b.Region}, 1, 1, false); len(r) == 1 {
			region = r[0]
		}
	}
	models := max(len(b.Models), 1)
	o.Quantity = models
	switch tier {
	case "gpu_optimized":
		o.Compute = []ComputeRequest{{Region: region, Pool: "gpu", Units: models}}
	case "gpu_high_memory":
		o.Compute = []ComputeRequest{{Region: region, Pool: "gpu", Units: 2 * models}}
	default:
		o.Compute = []ComputeRequest{{Region: region, Pool: "vcpu", Units: 4 * models}}
	}
	for _, m := range b.Models {
		o.Deployment = append(o.Deployment, DeployItem{Type: "model_endpoint", Name: m.Name, Region: region, Count: 1,
			Spec: map[string]any{"type": m.Type, "framework": m.Framework, "compute_tier": tier}})
	}
	if len(b.Models) == 0 {
		o.Deployment = append(o.Deployment, DeployItem{Type: "workspace", Name: "default", Region: region, Count: 1, Spec: map[string]any{"compute_tier": tier}})
	}
	return nil
}
