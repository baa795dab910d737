module k8s.io/fake

go 1.26
