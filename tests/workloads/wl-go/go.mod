module wlgo

go 1.19
