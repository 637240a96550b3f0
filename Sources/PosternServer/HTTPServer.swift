internal import CMicroHTTPD
