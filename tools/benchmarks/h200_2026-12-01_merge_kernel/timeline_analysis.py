import struct,glob,sys,statistics as st
W=160
def pct(v,q):
    v=sorted(v); return v[min(len(v)-1,int(q*(len(v)-1)+0.5))]
for f in sorted(glob.glob('/tmp/tl/*_r1.bin')):
    d=open(f,'rb').read(); n=len(d)//8; w=struct.unpack('<%dQ'%n,d)
    ev=w[512*W]/1000.0
    ctas=[w[c*W:(c+1)*W] for c in range(512) if w[c*W]!=0]
    t0=min(c[0] for c in ctas)
    rates=[(c[3]-c[1])/(c[4]-c[0]) for c in ctas if c[4]>c[0]]
    ghz=st.median(rates)
    us=lambda cyc: cyc/ghz/1000.0
    ends=[(c[4]-t0)/1000 for c in ctas]; starts=[(c[0]-t0)/1000 for c in ctas]
    name=f.split('/')[-1].replace('_r1.bin','').split('_BM_PagedAttention')[1]
    print(f"\n{name}: event {ev:.1f} us, {len(ctas)} CTAs, clock {ghz:.2f} GHz, segs/CTA max {max(c[2] for c in ctas)}")
    print(f"  CTA entry: max {max(starts):.2f} us; CTA end: min {min(ends):.1f} p10 {pct(ends,.1):.1f} p50 {pct(ends,.5):.1f} p90 {pct(ends,.9):.1f} max {max(ends):.1f}")
    q=[];first=[];loop=[];fold=[];epi=[];gap=[];pfirst=[];plead=[];start0=[];tiles_dt=[]
    for c in ctas:
        ns=c[2]
        for i in range(min(ns,12)):
            b=8+8*i; s=c[b:b+6]
            if 0 in s: continue
            q.append(us(s[1]-s[0])); first.append(us(s[2]-s[1])); loop.append(us(s[3]-s[2])); fold.append(us(s[4]-s[3])); epi.append(us(s[5]-s[4]))
            if i==0: start0.append(us(s[0]-c[1]))
            if i+1<ns and c[b+8]!=0: gap.append(us(c[b+8+2]-s[3]))  # own last tile end -> next seg first tile landed
            pb=104+4*i
            if i<13 and c[pb]!=0 and c[pb+1]!=0:
                pfirst.append(us(c[pb+1]-c[pb]))
                plead.append(us(s[3]-c[pb]))  # producer at seg i+? start vs consumer
    f2=lambda v: f"{st.median(v):6.2f} (p90 {pct(v,.9):6.2f})" if v else "-"
    print(f"  consumer per segment: query {f2(q)}; first tile {f2(first)}; tile loop {f2(loop)}; fold {f2(fold)}; write+merge {f2(epi)}")
    print(f"  boundary (own last tile done -> next segment's first tile in hand): {f2(gap)}; entry->seg0 start {f2(start0)}")
    print(f"  producer: seg start -> first tile issued {f2(pfirst)}")
    # producer timing of next seg relative to consumer boundary
    lead=[]
    for c in ctas:
        for i in range(min(c[2],12)-1):
            pb=104+4*(i+1); b=8+8*i
            if c[pb+1] and c[b+3]: lead.append(us(c[b+3]-c[pb+1]))
    if lead: print(f"  producer issued next seg's first tile this long before consumers' own last tile: {f2(lead)}")
    fin=[(c[4]-t0)/1000 - us(c[3]-c[8+8*(c[2]-1)+5]) for c in ctas if c[2]>0 and c[8+8*(min(c[2],12)-1)+5]]
