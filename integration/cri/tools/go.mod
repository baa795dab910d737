module github.com/railcni/rail/integration/cri/tools

go 1.26.8
