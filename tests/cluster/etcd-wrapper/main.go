// Command etcd is the etcd server, exactly as the etcd repository's main.go
// builds it: everything happens in etcdmain.Main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
