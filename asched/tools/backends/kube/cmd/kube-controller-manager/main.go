// Command kube-controller-manager is the genuine controller manager (the PV
// binder, the resourceclaim and Job controllers...), built from k8s.io/kubernetes.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as the upstream binary embeds them

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // kubernetes_build_info
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
