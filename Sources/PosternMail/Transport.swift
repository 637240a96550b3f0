internal import CCurl
