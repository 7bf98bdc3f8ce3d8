package gateway

import (
	"fmt"
	"net"
)

// displayAddr shows a wildcard listen address as localhost, which is where a browser on this
// machine reaches it.
func displayAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("localhost", fmt.Sprint(tcp.Port))
}
