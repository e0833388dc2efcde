// Command etcd is the etcd server at the version k8s.io/kubernetes pins its
// etcd client to (kubeadm's default for the same release).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
