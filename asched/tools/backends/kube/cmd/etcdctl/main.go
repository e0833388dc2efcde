// Command etcdctl is etcd's client at the server's version: the backend uses
// it to read the revision, compact history and take snapshots.
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() {
	ctlv3.MustStart()
}
