package webhooks_test

import (
	"fmt"
	"time"

	"github.com/telcoplatform/platform/webhooks"
)

// ExampleSign signs the test vector of the Standard Webhooks libraries.
func ExampleSign() {
	sig, err := webhooks.Sign(
		[]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		"msg_p5jXN8AQM9LWM0D4loKWxJek",
		time.Unix(1614265330, 0),
		[]byte(`{"test": 2432232314}`),
	)
	fmt.Println(sig, err)
	// Output: v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= <nil>
}

// ExampleNormalizePatterns shows aliases being canonicalised for a billing
// subscription.
func ExampleNormalizePatterns() {
	events, err := webhooks.NormalizePatterns(webhooks.AreaBilling, []string{"invoice.generated", "payment.*"})
	fmt.Println(events, err)
	fmt.Println(webhooks.Matches(events, "payment.received"), webhooks.Matches(events, "service.down"))
	// Output:
	// [invoice.created payment.*] <nil>
	// true false
}
